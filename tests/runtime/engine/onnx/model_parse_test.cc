// recur's ModelProto parse, which copies the main graph's long raw_data itself, against
// protobuf's own parse of the same bytes: the wire format's corners (a field given twice,
// unknown fields, groups, fields in any order), truncation, nesting depth and the file mapping.
#include "runtime/engine/onnx/model_parse.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include <onnx/onnx_pb.h>

#include "tests/support/model_builder.h"

namespace recur {
namespace {

// The wire format by hand, for what onnx::ModelProto would not write itself.
std::string varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += static_cast<char>((v & 0x7f) | 0x80);
  return s + static_cast<char>(v);
}
std::string tag(uint32_t number, int wire) { return varint(uint64_t{number} << 3 | wire); }
std::string bytes_field(uint32_t number, const std::string& payload) {
  return tag(number, 2) + varint(payload.size()) + payload;
}
std::string varint_field(uint32_t number, uint64_t v) { return tag(number, 0) + varint(v); }

std::string pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return s;
}

onnx::TensorProto raw_tensor(const std::string& name, size_t floats, int seed) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(static_cast<int64_t>(floats));
  t.set_raw_data(pattern(floats * 4, seed));
  return t;
}

// A model whose graph has initializers of every kind: long and short raw_data, typed data, one
// with raw_data before its name and an unknown field, one with two raw_data fields (the last
// wins), the graph given again as a second field 7 (protobuf merges the two), and unknown
// fields of every wire type at each level.
std::string corner_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Add");
  n->add_input("a");
  n->add_input("b");
  n->add_output("y");
  *g->add_initializer() = raw_tensor("a", 3000, 1);
  onnx::TensorProto* typed = g->add_initializer();
  typed->set_name("typed");
  typed->set_data_type(onnx::TensorProto::FLOAT);
  typed->add_dims(2);
  typed->add_float_data(1.5f);
  typed->add_float_data(-2.0f);
  *g->add_initializer() = raw_tensor("short", 3, 2);
  std::string bytes = m.SerializeAsString();

  const std::string first_raw = bytes_field(9, pattern(800, 3));
  const std::string reordered = first_raw + bytes_field(8, "b") + varint_field(2, 1) +
                                varint_field(1, 200) + varint_field(4000, 7) + tag(4001, 5) +
                                "abcd";
  const std::string twice = bytes_field(8, "twice") + varint_field(2, 1) + varint_field(1, 50) +
                            bytes_field(9, pattern(200, 4)) + bytes_field(9, pattern(200, 5));
  const std::string second_graph = bytes_field(5, reordered) + varint_field(999, 12345) +
                                   bytes_field(5, twice) + bytes_field(2, "renamed") + tag(998, 1) +
                                   "12345678";
  bytes += bytes_field(7, second_graph);
  bytes += tag(1001, 5) + "wxyz" + bytes_field(1002, "unknown bytes");
  bytes += bytes_field(7, bytes_field(5, raw_tensor("late", 500, 6).SerializeAsString()));
  return bytes;
}

void expect_same_as_protobuf(const std::string& bytes, size_t copy_from, bool may_discard = false,
                             const char* data = nullptr) {
  onnx::ModelProto expected;
  const bool parsed = !bytes.empty() && expected.ParseFromString(bytes);
  ParseOptions options;
  options.copy_from = copy_from;
  options.may_discard = may_discard;
  onnx::ModelProto got;
  const ParseResult r = parse_model_proto(data ? data : bytes.data(), bytes.size(), options, &got);
  ASSERT_EQ(r == ParseResult::kParsed, parsed) << "copy_from " << copy_from;
  if (parsed) {
    EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString()) << copy_from;
  }
}

TEST(ModelParse, GivesProtobufsMessageWhereverTheCutFalls) {
  const std::string bytes = corner_model();
  onnx::ModelProto protobufs;
  ASSERT_TRUE(protobufs.ParseFromString(bytes));
  // The merged graph: three initializers, then the second field 7's two and the third's one.
  ASSERT_EQ(protobufs.graph().initializer_size(), 6);
  EXPECT_EQ(protobufs.graph().name(), "renamed");
  EXPECT_EQ(protobufs.graph().initializer(4).raw_data(), pattern(200, 5));
  for (size_t copy_from : {size_t{1}, size_t{12}, size_t{800}, size_t{801}, size_t{2000},
                           size_t{12000}, size_t{12001}, ParseOptions{}.copy_from}) {
    expect_same_as_protobuf(bytes, copy_from);
  }
}

// Every prefix of the model: recur's parse refuses exactly those protobuf refuses, and the cut
// raw_data is never read past the end.
TEST(ModelParse, RefusesEveryTruncationProtobufRefuses) {
  const std::string bytes = corner_model();
  for (size_t n = 0; n <= bytes.size(); ++n) {
    expect_same_as_protobuf(bytes.substr(0, n), 1);
    if (HasFatalFailure()) return;
  }
}

// What protobuf parses as an unknown field but the walker does not frame (a group, a field
// number 0, a varint of 11 bytes) goes to protobuf's parse whole, so both agree.
TEST(ModelParse, LeavesWhatItDoesNotFrameToProtobuf) {
  const std::string model = corner_model();
  const std::string group = tag(1003, 3) + varint_field(1, 5) + tag(1003, 4);
  for (const std::string& extra :
       {group, tag(0, 0) + varint(1), tag(1004, 0) + std::string(10, '\xff') + '\x01',
        bytes_field(7, group), bytes_field(7, bytes_field(5, group + bytes_field(9, "xyzw"))),
        tag(7, 0) + varint(3), bytes_field(7, varint_field(5, 9)), tag(1005, 6)}) {
    expect_same_as_protobuf(model + extra, 1);
    expect_same_as_protobuf(extra + model, 1);
  }
}

// A subgraph nested n deep in Ifs in the main graph, three messages a level (node, attribute,
// graph), whose innermost graph holds `extra` more levels (a node, its attribute, a tensor).
std::string nested_model(int n, int extra) {
  onnx::GraphProto inner;
  inner.set_name("leaf");
  if (extra > 0) {
    onnx::NodeProto* node = inner.add_node();
    node->set_op_type("Constant");
    if (extra > 1) {
      onnx::AttributeProto* a = node->add_attribute();
      a->set_name("value");
      if (extra > 2) *a->mutable_t() = raw_tensor("c", 1, 8);
    }
  }
  for (int i = 0; i < n; ++i) {
    onnx::GraphProto outer;
    onnx::NodeProto* node = outer.add_node();
    node->set_op_type("If");
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = std::move(inner);
    inner = std::move(outer);
  }
  *inner.add_initializer() = raw_tensor("w", 100, 7);
  onnx::ModelProto m;
  m.set_ir_version(8);
  *m.mutable_graph() = std::move(inner);
  return m.SerializeAsString();
}

// The pieces are parsed as the graph and the tensor themselves, with the nesting budget they
// would have had inside the whole: protobuf's parse and recur's give up at the same depth, to
// the level.
TEST(ModelParse, StopsAtProtobufsNestingDepth) {
  int parsed = 0;
  int refused = 0;
  for (int n = 30; n <= 34; ++n) {
    for (int extra = 0; extra <= 3; ++extra) {
      const std::string bytes = nested_model(n, extra);
      onnx::ModelProto m;
      const bool ok = m.ParseFromString(bytes);
      (ok ? parsed : refused)++;
      expect_same_as_protobuf(bytes, 1);
      ParseOptions options;
      options.copy_from = 1;
      EXPECT_EQ(parse_model_proto(bytes.data(), bytes.size(), options, &m),
                ok ? ParseResult::kParsed : ParseResult::kTooDeep)
          << n << " Ifs and " << extra;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(refused, 0);
}

// From a mapping of the file, with the pages behind the reader given back: the bytes are the
// file's either way.
TEST(ModelParse, FromAMappedFileGivingPagesBack) {
  testing::TempDir dir;
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(corner_model()));
  for (int i = 0; i < 3; ++i) *m.mutable_graph()->add_initializer() = raw_tensor("big", 200000, i);
  const std::string bytes = m.SerializeAsString();
  const std::string path = (dir.path() / "m.onnx").string();
  std::ofstream(path, std::ios::binary) << bytes;
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* p = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(p, MAP_FAILED);
  for (size_t copy_from : {size_t{1}, size_t{700000}, ParseOptions{}.copy_from}) {
    expect_same_as_protobuf(bytes, copy_from, true, static_cast<const char*>(p));
  }
  ::munmap(p, bytes.size());
}

}  // namespace
}  // namespace recur
