#include "runtime/engine/onnx/model_parse.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "runtime/core/code_layout.h"
#include "runtime/core/page_discard.h"

namespace recur {

namespace {

// protobuf's default limit of nested messages, which ONNX Runtime and the onnx package keep too.
constexpr int kRecursionLimit = 100;

// The bytes being parsed. Where the mapping may be discarded, each 64 KiB chunk is given back to
// the kernel once the reader is two chunks past it, so that the file's pages and the parsed
// message are never both resident in full: the weights are in memory once while loading. 64 KiB
// is small enough that a model under 2 MiB is not held twice at the parse's end, and costs a
// madvise per 64 KiB, far below the parse itself.
class Bytes {
 public:
  static constexpr size_t kChunk = size_t{1} << 16;

  Bytes(const char* data, size_t size, bool may_discard)
      : data_(data), size_(size), may_discard_(may_discard) {}
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // Everything before `pos` has been read for the last time.
  void passed(size_t pos) {
    if (!may_discard_ || pos < 2 * kChunk) return;
    const size_t end = (pos - 2 * kChunk) / kChunk * kChunk;
    if (end <= discarded_) return;
    discard_pages(data_ + discarded_, data_ + end);
    discarded_ = end;
  }

 private:
  const char* data_;  // page-aligned where may_discard_
  size_t size_;
  bool may_discard_;
  size_t discarded_ = 0;
};

// [begin, end) of the bytes, for protobuf's parser, in chunks.
class Window final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  Window(Bytes* bytes, size_t begin, size_t end)
      : bytes_(bytes), begin_(begin), pos_(begin), end_(end) {}
  bool Next(const void** out, int* n) override {
    if (pos_ >= end_) return false;
    bytes_->passed(pos_);
    const size_t len = std::min(Bytes::kChunk, end_ - pos_);
    *out = bytes_->data() + pos_;
    *n = static_cast<int>(len);
    pos_ += len;
    return true;
  }
  void BackUp(int n) override { pos_ -= static_cast<size_t>(n); }
  bool Skip(int n) override {
    if (static_cast<size_t>(n) > end_ - pos_) {
      pos_ = end_;
      return false;
    }
    pos_ += static_cast<size_t>(n);
    return true;
  }
  int64_t ByteCount() const override { return static_cast<int64_t>(pos_ - begin_); }

 private:
  Bytes* bytes_;
  size_t begin_;
  size_t pos_;
  size_t end_;
};

// Merges the fields in [begin, end) into `m`, a message `depth` levels below the ModelProto, with
// the nesting budget it would have had inside the whole parse. The range holds whole fields, so
// merging the ranges of a message one after another is parsing the message.
RECUR_LOAD_PATH bool merge(Bytes& bytes, size_t begin, size_t end, int depth,
                           google::protobuf::MessageLite* m) {
  if (begin == end) return true;
  Window window(&bytes, begin, end);
  google::protobuf::io::CodedInputStream in(&window);
  in.SetRecursionLimit(kRecursionLimit - depth);
  return m->MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// The wire format, as far as finding the initializers' raw_data needs it.
enum Wire { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

struct Field {
  uint32_t number = 0;
  int wire = 0;
  size_t begin = 0;    // its tag's first byte
  size_t payload = 0;  // a length-delimited field's first byte after the length
  size_t end = 0;      // one past its last byte
};

bool read_varint(const uint8_t* d, size_t end, size_t* pos, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
    const uint8_t b = d[(*pos)++];
    r |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80u)) {
      *v = r;
      return true;
    }
  }
  return false;
}

// The field at *pos of a message that ends at `end`. False where it is not well framed, and for
// groups, which protobuf still parses (as unknown fields): the caller leaves such bytes to
// protobuf's own parse, so this need only be right where it says yes.
bool next_field(const uint8_t* d, size_t end, size_t* pos, Field* f) {
  f->begin = *pos;
  uint64_t tag = 0;
  uint64_t v = 0;
  if (!read_varint(d, end, pos, &tag) || tag > UINT32_MAX || (tag >> 3) == 0) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire = static_cast<int>(tag & 7);
  switch (f->wire) {
    case kVarint:
      if (!read_varint(d, end, pos, &v)) return false;
      break;
    case kFixed64:
    case kFixed32: {
      const size_t n = f->wire == kFixed64 ? 8 : 4;
      if (end - *pos < n) return false;
      *pos += n;
      break;
    }
    case kLengthDelimited:
      if (!read_varint(d, end, pos, &v) || v > end - *pos) return false;
      f->payload = *pos;
      *pos += static_cast<size_t>(v);
      break;
    default:
      return false;
  }
  f->end = *pos;
  return true;
}

// Calls visit(field) for each field of the message in [begin, end); false where one is not
// well framed or visit says no.
template <class Visit>
bool for_each_field(const uint8_t* d, size_t begin, size_t end, Visit&& visit) {
  Field f;
  for (size_t pos = begin; pos < end;) {
    if (!next_field(d, end, &pos, &f) || !visit(f)) return false;
  }
  return true;
}

bool is_message(const Field& f, uint32_t number) {
  return f.number == number && f.wire == kLengthDelimited;
}

// An initializer whose raw_data recur copies.
struct TensorCut {
  Field tensor;  // the initializer, a field of its graph
  Field raw;     // its raw_data
};

// A graph field of the model, with its initializers whose raw_data recur copies.
struct GraphCuts {
  Field graph;
  std::vector<TensorCut> tensors;
};

// The initializers of the model's graph that have one raw_data field at least `copy_from` long.
// False where the framing is anything but plain, so that protobuf parses the whole.
RECUR_LOAD_PATH bool find_cuts(const uint8_t* d, size_t size, size_t copy_from,
                               std::vector<GraphCuts>* cuts) {
  auto tensor_cut = [&](const Field& tensor, std::vector<TensorCut>* out) {
    int raws = 0;
    Field raw;
    const bool framed = for_each_field(d, tensor.payload, tensor.end, [&](const Field& f) {
      if (is_message(f, onnx::TensorProto::kRawDataFieldNumber)) {
        ++raws;
        raw = f;
      }
      return true;
    });
    // With two raw_data fields the last wins; such a tensor is left to protobuf.
    if (framed && raws == 1 && raw.end - raw.payload >= copy_from) out->push_back({tensor, raw});
    return framed;
  };
  return for_each_field(d, 0, size, [&](const Field& g) {
    if (!is_message(g, onnx::ModelProto::kGraphFieldNumber)) return true;
    GraphCuts graph{g, {}};
    const bool framed = for_each_field(d, g.payload, g.end, [&](const Field& t) {
      return !is_message(t, onnx::GraphProto::kInitializerFieldNumber) ||
             tensor_cut(t, &graph.tensors);
    });
    if (framed && !graph.tensors.empty()) cuts->push_back(std::move(graph));
    return framed;
  });
}

// raw_data copied with its full length reserved once, the source given back behind the copy.
RECUR_LOAD_PATH void copy_payload(Bytes& bytes, const Field& raw, std::string* out) {
  out->clear();
  out->reserve(raw.end - raw.payload);
  for (size_t pos = raw.payload; pos < raw.end;) {
    const size_t n = std::min(size_t{1} << 20, raw.end - pos);
    out->append(bytes.data() + pos, n);
    pos += n;
    bytes.passed(pos);
  }
}

// The ModelProto merged from the ranges between the cuts, each cut's payload copied in between,
// so that the bytes are read from front to back once.
RECUR_LOAD_PATH bool parse_around(Bytes& bytes, const std::vector<GraphCuts>& cuts,
                                  onnx::ModelProto* mp) {
  size_t pos = 0;
  for (const GraphCuts& g : cuts) {
    if (!merge(bytes, pos, g.graph.begin, 0, mp)) return false;
    onnx::GraphProto* gp = mp->mutable_graph();
    size_t gpos = g.graph.payload;
    for (const TensorCut& t : g.tensors) {
      if (!merge(bytes, gpos, t.tensor.begin, 1, gp)) return false;
      onnx::TensorProto* tp = gp->add_initializer();
      if (!merge(bytes, t.tensor.payload, t.raw.begin, 2, tp)) return false;
      copy_payload(bytes, t.raw, tp->mutable_raw_data());
      if (!merge(bytes, t.raw.end, t.tensor.end, 2, tp)) return false;
      gpos = t.tensor.end;
    }
    if (!merge(bytes, gpos, g.graph.end, 1, gp)) return false;
    pos = g.graph.end;
  }
  return merge(bytes, pos, bytes.size(), 0, mp);
}

// Called only after a parse failed: whether the bytes would parse with room for 1,000 levels, so
// that the error can say why instead of suggesting truncation. A graph in an If branch is three
// levels below its node (node, attribute, graph), so about 33 nested Ifs or Loops reach 100.
bool parses_when_deeper(const char* data, size_t size) {
  google::protobuf::io::ArrayInputStream raw(data, static_cast<int>(size));
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetRecursionLimit(1000);
  onnx::ModelProto mp;
  return mp.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

}  // namespace

RECUR_LOAD_PATH ParseResult parse_model_proto(const char* data, size_t size,
                                              const ParseOptions& options, onnx::ModelProto* mp) {
  mp->Clear();
  if (size == 0) return ParseResult::kInvalid;
  Bytes bytes(data, size, options.may_discard);
  std::vector<GraphCuts> cuts;
  const auto* d = reinterpret_cast<const uint8_t*>(data);
  const bool parsed =
      size >= options.copy_from && find_cuts(d, size, options.copy_from, &cuts) && !cuts.empty()
          ? parse_around(bytes, cuts, mp)
          : merge(bytes, 0, size, 0, mp);
  if (parsed) return ParseResult::kParsed;
  mp->Clear();
  return parses_when_deeper(data, size) ? ParseResult::kTooDeep : ParseResult::kInvalid;
}

}  // namespace recur
