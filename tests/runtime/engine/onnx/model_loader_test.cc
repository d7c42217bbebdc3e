// The loader: opsets, every initializer encoding, external data and its confinement, graph
// inputs with defaults, symbolic shapes, omitted optional values, and malformed files.
#include "runtime/engine/onnx/model_loader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <string>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/fifo.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::floats;
using testing::ModelBuilder;
using testing::TempDir;
namespace fs = std::filesystem;

ModelBuilder identity_model() {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Identity", {"x"}, {"y"}, "id");
  return m;
}

// ModelProto's descriptive fields and metadata_props reach Session::metadata(); a key given
// twice keeps its last value, as ONNX Runtime's map does, and loading warns about it.
TEST(ModelLoader, MetadataAsTheFileGivesIt) {
  TempDir dir;
  ModelBuilder m = identity_model();
  onnx::ModelProto& p = m.proto();
  p.set_producer_name("pytorch");
  p.set_producer_version("1.13.1");
  p.set_domain("org.example");
  p.set_doc_string("a test model");
  p.set_model_version(7);
  m.graph().set_name("main_graph");
  m.graph().set_doc_string("the graph");
  auto prop = [&](const char* key, const char* value) {
    auto* e = p.add_metadata_props();
    e->set_key(key);
    e->set_value(value);
  };
  prop("labels", "yes,no");
  prop("sample_rate", "16000");
  prop("labels", "up,down");
  auto* ml = p.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  const Session s(m.save(dir.path()));
  const ModelMetadata& md = s.metadata();
  EXPECT_EQ(md.producer_name, "pytorch");
  EXPECT_EQ(md.producer_version, "1.13.1");
  EXPECT_EQ(md.domain, "org.example");
  EXPECT_EQ(md.description, "a test model");
  EXPECT_EQ(md.version, 7);
  EXPECT_EQ(md.graph_name, "main_graph");
  EXPECT_EQ(md.graph_description, "the graph");
  EXPECT_EQ(md.ir_version, p.ir_version());
  EXPECT_EQ(md.opsets,
            (std::map<std::string, int64_t>{{"", p.opset_import(0).version()}, {"ai.onnx.ml", 3}}));
  EXPECT_EQ(md.custom,
            (std::map<std::string, std::string>{{"labels", "up,down"}, {"sample_rate", "16000"}}));
  ASSERT_EQ(s.warnings().size(), 1u);
  EXPECT_NE(s.warnings()[0].find("key 'labels' more than once"), std::string::npos)
      << s.warnings()[0];

  // A file that says nothing about itself.
  ModelBuilder plain = identity_model();
  plain.proto().clear_producer_name();
  const Session bare(plain.save(dir.path(), "bare.onnx"));
  EXPECT_EQ(bare.metadata().producer_name, "");
  EXPECT_EQ(bare.metadata().description, "");
  EXPECT_TRUE(bare.metadata().custom.empty());
  EXPECT_TRUE(bare.warnings().empty());
}

TEST(ModelLoader, GarbageFileNamesTheFile) {
  TempDir dir;
  const auto path = (dir.path() / "garbage.onnx").string();
  std::ofstream(path) << "this is not a protobuf \x01\x02\xff\xfe at all";
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, {path});
}

TEST(ModelLoader, TruncatedFileIsAClearError) {
  TempDir dir;
  ModelBuilder m = identity_model();
  m.initializer("w", floats({64}, std::vector<float>(64, 1.5f)));
  const std::string bytes = m.bytes();
  for (size_t cut : {bytes.size() / 3, bytes.size() / 2, bytes.size() - 3}) {
    const auto path = (dir.path() / ("cut" + std::to_string(cut) + ".onnx")).string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    try {
      Session s(path);
      FAIL() << "a model truncated at " << cut << " of " << bytes.size() << " bytes loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST(ModelLoader, EmptyAndMissingFiles) {
  TempDir dir;
  const auto empty = (dir.path() / "empty.onnx").string();
  std::ofstream(empty).close();
  expect_error([&] { Session s(empty); }, ErrorCode::kInvalidModel, {empty});
  const auto missing = (dir.path() / "missing.onnx").string();
  expect_error([&] { Session s(missing); }, ErrorCode::kIo, {missing});
}

TEST(ModelLoader, UnknownDomainNamesNodeAndDomain) {
  TempDir dir;
  ModelBuilder m;
  m.opset("com.example", 1);
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Frobnicate", {"x"}, {"y"}, "frob", "com.example");
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kNotImplemented, {"frob", "com.example"});
}

TEST(ModelLoader, UnsupportedOpsetIsAnError) {
  TempDir dir;
  ModelBuilder m(99);
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Identity", {"x"}, {"y"});
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kNotImplemented, {"opset 99", path});
}

// 26 is the newest opset ONNX Runtime 1.30 reads (ONNX 1.21); 27 is ONNX 1.22's.
TEST(ModelLoader, OpsetAbove26NamesTheHighestKnownAndTheNodeTypes) {
  TempDir dir;
  ModelBuilder m(27);
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Relu", {"x"}, {"r"});
  m.node("Identity", {"r"}, {"y"});
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kNotImplemented,
               {path, "opset 27 of domain 'ai.onnx'", "knows opsets 1 to 26",
                "nodes of that domain: Identity, Relu"});
}

TEST(ModelLoader, Opset26AndIrVersion13AreAccepted) {
  TempDir dir;
  ModelBuilder m(26, 13);
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Relu", {"x"}, {"y"});
  Session s(m.save(dir.path()));
  Outputs out = s.run({{"x", Tensor::from_vector<float>({2}, {-1.0f, 2.0f})}});
  EXPECT_EQ(out[0].data<float>()[0], 0.0f);
  EXPECT_EQ(out[0].data<float>()[1], 2.0f);
}

TEST(ModelLoader, UnknownOperatorNamesNodeAndOp) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("NoSuchOp", {"x"}, {"y"}, "mystery");
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kNotImplemented,
               {"mystery", "unsupported op NoSuchOp (opset 17)"});
}

// Every dtype through the typed fields and through raw_data; the graph outputs are the
// initializers themselves, so a run returns what the loader decoded.
TEST(ModelLoader, InitializersInEveryEncoding) {
  TempDir dir;
  ModelBuilder m;
  auto add = [&](const char* name, int32_t dtype) {
    auto* t = m.graph().add_initializer();
    t->set_name(name);
    t->set_data_type(dtype);
    t->add_dims(3);
    m.output(name, static_cast<DType>(dtype));
    return t;
  };
  auto* f = add("f32", 1);
  for (float v : {1.5f, -2.0f, 3.25f}) f->add_float_data(v);
  auto* d = add("f64", 11);
  for (double v : {1e-300, -2.0, 3.0}) d->add_double_data(v);
  auto* i8 = add("i8", 3);
  for (int v : {-128, 0, 127}) i8->add_int32_data(v);
  auto* i16 = add("i16", 5);
  for (int v : {-32768, 1, 32767}) i16->add_int32_data(v);
  auto* i32 = add("i32", 6);
  for (int v : {-7, 0, 2147483647}) i32->add_int32_data(v);
  auto* i64 = add("i64", 7);
  for (int64_t v : {int64_t{-1} << 40, int64_t{0}, int64_t{5}}) i64->add_int64_data(v);
  auto* u8 = add("u8", 2);
  for (int v : {0, 128, 255}) u8->add_int32_data(v);
  auto* u16 = add("u16", 4);
  for (int v : {0, 1, 65535}) u16->add_int32_data(v);
  auto* u32 = add("u32", 12);
  for (uint64_t v : {0ull, 1ull, 4294967295ull}) u32->add_uint64_data(v);
  auto* u64 = add("u64", 13);
  for (uint64_t v : {0ull, 1ull, 18446744073709551615ull}) u64->add_uint64_data(v);
  auto* b = add("b", 9);
  for (int v : {1, 0, 1}) b->add_int32_data(v);
  auto* h = add("f16", 10);
  for (int v : {0x3C00, 0xC000, 0x3555}) h->add_int32_data(v);  // 1.0, -2.0, 0.333252
  auto* raw = add("raw_f32", 1);
  const float rv[3] = {4.0f, -5.5f, 6.0f};
  raw->set_raw_data(std::string(reinterpret_cast<const char*>(rv), sizeof rv));
  auto* raw64 = add("raw_i64", 7);
  const int64_t r64[3] = {9, -9, 1ll << 50};
  raw64->set_raw_data(std::string(reinterpret_cast<const char*>(r64), sizeof r64));

  Session s(m.save(dir.path()));
  Outputs o = s.run({});
  EXPECT_EQ(o["f32"].data<float>()[0], 1.5f);
  EXPECT_EQ(o["f32"].data<float>()[2], 3.25f);
  EXPECT_EQ(o["f64"].data<double>()[0], 1e-300);
  EXPECT_EQ(o["i8"].data<int8_t>()[0], -128);
  EXPECT_EQ(o["i16"].data<int16_t>()[2], 32767);
  EXPECT_EQ(o["i32"].data<int32_t>()[2], 2147483647);
  EXPECT_EQ(o["i64"].data<int64_t>()[0], int64_t{-1} << 40);
  EXPECT_EQ(o["u8"].data<uint8_t>()[2], 255);
  EXPECT_EQ(o["u16"].data<uint16_t>()[2], 65535);
  EXPECT_EQ(o["u32"].data<uint32_t>()[2], 4294967295u);
  EXPECT_EQ(o["u64"].data<uint64_t>()[2], 18446744073709551615ull);
  EXPECT_EQ(o["b"].data<bool>()[0], true);
  EXPECT_EQ(o["b"].data<bool>()[1], false);
  EXPECT_EQ(static_cast<float>(o["f16"].data<Float16>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(o["f16"].data<Float16>()[1]), -2.0f);
  EXPECT_NEAR(static_cast<float>(o["f16"].data<Float16>()[2]), 0.333252f, 1e-6f);
  EXPECT_EQ(o["raw_f32"].data<float>()[1], -5.5f);
  EXPECT_EQ(o["raw_i64"].data<int64_t>()[2], 1ll << 50);
}

TEST(ModelLoader, WrongElementCountIsAnError) {
  TempDir dir;
  ModelBuilder m;
  auto* t = m.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(4);
  t->add_float_data(1.0f);
  m.output("w", DType::kFloat32);
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, {"'w'", "needs 4"});
}

TEST(ModelLoader, AbsurdShapeIsRefusedBeforeAllocating) {
  TempDir dir;
  ModelBuilder m;
  auto* t = m.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  for (int i = 0; i < 4; ++i) t->add_dims(1 << 20);
  m.output("w", DType::kFloat32);
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, {"'w'", "too large"});
}

// Below the element-count guard but far beyond memory (2^39 floats, 2 TiB) with a few bytes
// of data: the data's size is checked before anything is allocated, so the error is about
// the data, not an allocation failure (found by mutating models under AddressSanitizer).
TEST(ModelLoader, LargeShapeWithLittleDataIsRefusedBeforeAllocating) {
  for (bool raw : {true, false}) {
    TempDir dir;
    ModelBuilder m;
    auto* t = m.graph().add_initializer();
    t->set_name("w");
    t->set_data_type(1);
    t->add_dims(int64_t{1} << 20);
    t->add_dims(int64_t{1} << 19);
    if (raw) {
      t->set_raw_data(std::string(4, '\0'));
    } else {
      t->add_float_data(1.0f);
    }
    m.output("w", DType::kFloat32);
    const auto path = m.save(dir.path());
    expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel,
                 {"'w'", raw ? "raw_data has 4 bytes" : "float_data holds 1 values"});
  }
}

// Writes `values` at `offset` of `file` and an initializer pointing there.
void add_external(ModelBuilder& m, const fs::path& dir, const std::string& file,
                  const std::string& location, int64_t offset, const std::vector<float>& values,
                  int64_t length = -1) {
  std::ofstream out(dir / file, std::ios::binary);
  const std::string pad(static_cast<size_t>(offset), '\0');
  out.write(pad.data(), offset);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  out.close();
  auto* t = m.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(static_cast<int64_t>(values.size()));
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  if (length >= 0) kv("length", std::to_string(length));
}

TEST(ModelLoader, ExternalDataIsReadFromTheModelFolder) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {3});
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "w"}, {"y"});
  // An offset that is not a multiple of 4 exercises the unaligned path too.
  add_external(m, dir.path(), "weights.bin", "weights.bin", 10, {1.0f, 2.0f, 3.0f}, 12);
  Session s(m.save(dir.path()));
  Outputs o = s.run({{"x", floats({3}, {10, 20, 30})}});
  EXPECT_EQ(o[0].data<float>()[0], 11.0f);
  EXPECT_EQ(o[0].data<float>()[2], 33.0f);

  ModelBuilder aligned;
  aligned.input("x", DType::kFloat32, {3});
  aligned.output("y", DType::kFloat32);
  aligned.node("Add", {"x", "w"}, {"y"});
  fs::create_directories(dir.path() / "sub" / "data");
  add_external(aligned, dir.path() / "sub", "data/w.bin", "data/w.bin", 64, {-1.0f, -2.0f, -3.0f});
  Session s2(aligned.save(dir.path() / "sub"));
  Outputs o2 = s2.run({{"x", floats({3}, {1, 1, 1})}});
  EXPECT_EQ(o2[0].data<float>()[1], -1.0f);
}

TEST(ModelLoader, ExternalDataMayNotLeaveTheModelFolder) {
  TempDir dir;
  fs::create_directories(dir.path() / "model");
  for (const std::string& location :
       {std::string("../secret.bin"), std::string("sub/../../secret.bin"),
        (dir.path() / "secret.bin").string()}) {
    ModelBuilder m;
    m.output("w", DType::kFloat32);
    add_external(m, dir.path(), "secret.bin", location, 0, {1.0f, 2.0f});
    const auto path = m.save(dir.path() / "model");
    try {
      Session s(path);
      FAIL() << location << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidModel) << e.what();
      EXPECT_NE(std::string(e.what()).find(location), std::string::npos) << e.what();
    }
  }
  // A symbolic link inside the folder that points outside it is refused as well.
  fs::create_symlink(dir.path() / "secret.bin", dir.path() / "model" / "link.bin");
  ModelBuilder m;
  m.output("w", DType::kFloat32);
  add_external(m, dir.path(), "secret.bin", "link.bin", 0, {1.0f, 2.0f});
  const auto path = m.save(dir.path() / "model");
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, {"link.bin", "escapes"});
}

TEST(ModelLoader, ExternalDataPastTheEndOfTheFile) {
  TempDir dir;
  ModelBuilder m;
  m.output("w", DType::kFloat32);
  add_external(m, dir.path(), "short.bin", "short.bin", 0, {1.0f, 2.0f});
  // Claim four floats where the file holds two.
  m.graph().mutable_initializer(0)->set_dims(0, 4);
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, {"short.bin", "past the end"});

  ModelBuilder far;
  far.output("w", DType::kFloat32);
  add_external(far, dir.path(), "far.bin", "far.bin", 0, {1.0f});
  far.graph().mutable_initializer(0)->mutable_external_data(1)->set_value("1000000");
  const auto far_path = far.save(dir.path(), "far.onnx");
  expect_error([&] { Session s(far_path); }, ErrorCode::kInvalidModel, {"far.bin", "past the end"});

  ModelBuilder wrong_length;
  wrong_length.output("w", DType::kFloat32);
  add_external(wrong_length, dir.path(), "len.bin", "len.bin", 0, {1.0f, 2.0f}, 4);
  const auto len_path = wrong_length.save(dir.path(), "len.onnx");
  expect_error([&] { Session s(len_path); }, ErrorCode::kInvalidModel, {"length 4"});
}

// An offset near INT64_MAX: the error states offset and size apart, never their sum, which
// would overflow int64.
TEST(ModelLoader, ExternalDataOffsetNearInt64MaxIsAnErrorNotAnOverflow) {
  TempDir dir;
  ModelBuilder m;
  m.output("w", DType::kFloat32);
  add_external(m, dir.path(), "huge.bin", "huge.bin", 0, {1.0f, 2.0f}, 8);
  const std::string offset = std::to_string(INT64_MAX - 3);
  m.graph().mutable_initializer(0)->mutable_external_data(1)->set_value(offset);
  const auto path = m.save(dir.path());
  expect_error(
      [&] { Session s(path); }, ErrorCode::kInvalidModel,
      {path, "initializer 'w'", "huge.bin", "8 bytes at offset " + offset, "past the end"});
}

// A FIFO (or any non-regular file) as the model or as its external data is refused at once:
// open() on a FIFO would wait for a writer that never comes.
TEST(ModelLoader, FifoAsModelOrExternalDataIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string model_fifo = (dir.path() / "fifo.onnx").string();
  ASSERT_TRUE(testing::make_fifo(model_fifo));
  EXPECT_TRUE(testing::finishes_promptly(
      [&] {
        expect_error([&] { Session s(model_fifo); }, ErrorCode::kIo, {model_fifo, "FIFO"});
      },
      model_fifo));

  ModelBuilder m;
  m.output("w", DType::kFloat32);
  add_external(m, dir.path(), "pipe.bin", "pipe.bin", 0, {1.0f, 2.0f});
  const std::string data_fifo = (dir.path() / "pipe.bin").string();
  fs::remove(data_fifo);
  ASSERT_TRUE(testing::make_fifo(data_fifo));
  const auto path = m.save(dir.path());
  EXPECT_TRUE(testing::finishes_promptly(
      [&] {
        expect_error([&] { Session s(path); }, ErrorCode::kIo, {"pipe.bin", "FIFO"});
      },
      data_fifo));

  // A directory is refused the same way, naming it.
  const std::string folder = (dir.path() / "folder.onnx").string();
  fs::create_directories(folder);
  expect_error([&] { Session s(folder); }, ErrorCode::kIo, {folder, "a directory"});
}

TEST(ModelLoader, GraphInputWithInitializerIsAnOverridableDefault) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.input("bias", DType::kFloat32, {2});
  m.initializer("bias", floats({2}, {100, 200}));
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "bias"}, {"y"});
  Session s(m.save(dir.path()));
  ASSERT_EQ(s.inputs().size(), 2u);
  EXPECT_FALSE(s.inputs()[0].has_default);
  EXPECT_TRUE(s.inputs()[1].has_default);
  Outputs by_default = s.run({{"x", floats({2}, {1, 2})}});
  EXPECT_EQ(by_default[0].data<float>()[1], 202.0f);
  Outputs overridden = s.run({{"x", floats({2}, {1, 2})}, {"bias", floats({2}, {-1, -2})}});
  EXPECT_EQ(overridden[0].data<float>()[1], 0.0f);
}

// The declaration of a graph input wins over its initializer, which is only the default: the
// loader used to check them before it knew the value was a graph input.
TEST(ModelLoader, InitializerOfAnotherDtypeThanItsGraphInputIsAnError) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.input("bias", DType::kFloat32, {2});
  m.initializer("bias", Tensor::from_vector<double>({2}, {100, 200}));
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "bias"}, {"y"});
  const std::string path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel,
               {"model.onnx", "'bias'", "float64", "float32"});
}

// One name declared twice as a graph input was one value listed as two inputs, and the run
// then called the input the user had fed missing.
TEST(ModelLoader, GraphInputListedTwiceIsAnError) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Relu", {"x"}, {"y"});
  const std::string path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel,
               {"model.onnx", "graph input 'x' is listed twice"});
}

TEST(ModelLoader, GraphInputWithInitializerKeepsItsSymbolicDimension) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {-1}, {"n"});
  m.input("bias", DType::kFloat32, {-1}, {"n"});
  m.initializer("bias", floats({2}, {100, 200}));
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "bias"}, {"y"});
  Session s(m.save(dir.path()));
  EXPECT_EQ(s.inputs()[1].shape_string(), "[n]");
  Outputs by_default = s.run({{"x", floats({2}, {1, 2})}});
  EXPECT_EQ(by_default[0].data<float>()[1], 202.0f);
  Outputs other_size = s.run({{"x", floats({3}, {1, 2, 3})}, {"bias", floats({3}, {10, 20, 30})}});
  ASSERT_EQ(other_size[0].shape(), (Shape{3}));
  EXPECT_EQ(other_size[0].data<float>()[2], 33.0f);
}

TEST(ModelLoader, SymbolicDimensionsAreKept) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {-1, 4, -1}, {"batch", "", ""});
  m.output("y", DType::kFloat32);
  m.node("Identity", {"x"}, {"y"});
  Session s(m.save(dir.path()));
  EXPECT_EQ(s.inputs()[0].shape_string(), "[batch,4,?]");
  Outputs o = s.run({{"x", Tensor::zeros(DType::kFloat32, {3, 4, 5})}});
  EXPECT_EQ(o[0].shape(), (Shape{3, 4, 5}));
}

TEST(ModelLoader, OmittedOptionalValuesAreEmptyNames) {
  TempDir dir;
  ModelBuilder m(14);
  m.input("x", DType::kFloat32, {1, 1, 2});
  m.input("w", DType::kFloat32, {1, 3, 2});
  m.input("r", DType::kFloat32, {1, 3, 1});
  m.output("y_h", DType::kFloat32);
  m.node("GRU", {"x", "w", "r", "", "", ""}, {"", "y_h"}, "gru");
  Result<Model> model = load_model(m.save(dir.path()));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Node& n = model->graph->node(0);
  ASSERT_EQ(n.inputs.size(), 6u);
  EXPECT_TRUE(n.has_input(2));
  EXPECT_FALSE(n.has_input(3));
  EXPECT_FALSE(n.has_input(5));
  EXPECT_FALSE(n.has_output(0));
  EXPECT_TRUE(n.has_output(1));
}

TEST(ModelLoader, ReferenceToNothingNamesNodeAndValue) {
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "ghost"}, {"y"}, "adder");
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, {"adder", "'ghost'"});
}

TEST(ModelLoader, ValueProducedTwiceAndCycles) {
  TempDir dir;
  ModelBuilder twice;
  twice.input("x", DType::kFloat32, {2});
  twice.output("y", DType::kFloat32);
  twice.node("Identity", {"x"}, {"y"}, "first");
  twice.node("Identity", {"x"}, {"y"}, "second");
  const auto p1 = twice.save(dir.path(), "twice.onnx");
  expect_error([&] { Session s(p1); }, ErrorCode::kInvalidModel, {"'y'", "first", "second"});

  ModelBuilder cycle;
  cycle.input("x", DType::kFloat32, {2});
  cycle.output("b", DType::kFloat32);
  cycle.node("Add", {"x", "b"}, {"a"}, "left");
  cycle.node("Identity", {"a"}, {"b"}, "right");
  const auto p2 = cycle.save(dir.path(), "cycle.onnx");
  expect_error([&] { Session s(p2); }, ErrorCode::kInvalidModel, {"cycle"});
}

TEST(ModelLoader, SubgraphReferenceToNothingNamesTheSubgraph) {
  TempDir dir;
  ModelBuilder m;
  m.input("c", DType::kBool, {});
  m.output("y", DType::kFloat32);
  onnx::GraphProto branch;
  branch.set_name("then");
  auto* n = branch.add_node();
  n->set_op_type("Identity");
  n->set_name("inner");
  n->add_input("nowhere");
  n->add_output("out");
  branch.add_output()->set_name("out");
  auto& node = m.node("If", {"c"}, {"y"}, "branching");
  testing::set_attr(node, "then_branch", branch);
  testing::set_attr(node, "else_branch", branch);
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel,
               {"subgraph 'then_branch'", "branching", "inner", "'nowhere'"});
}

TEST(ModelLoader, OptionalMapsAndUnsupportedMapTypesAreRefusedClearly) {
  TempDir dir;
  ModelBuilder m;
  auto* in = m.graph().add_input();
  in->set_name("table");
  auto* map = in->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_map_type();
  map->set_key_type(7);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  m.output("table", DType::kFloat32);
  const auto path = m.save(dir.path());
  expect_error([&] { Session s(path); }, ErrorCode::kNotImplemented, {"'table'", "optional"});

  // int32 keys, and values that are sequences: recur's maps are those of ai.onnx.ml.
  ModelBuilder k;
  k.map_input("ints", DType::kInt32, DType::kFloat32);
  k.output("ints", DType::kUndefined);
  const auto kpath = k.save(dir.path(), "keys.onnx");
  expect_error([&] { Session s(kpath); }, ErrorCode::kNotImplemented,
               {"'ints'", "int32 keys", "int64 or string keys"});
  ModelBuilder v;
  auto* vin = v.graph().add_input();
  vin->set_name("nested");
  auto* vmap = vin->mutable_type()->mutable_map_type();
  vmap->set_key_type(8);
  vmap->mutable_value_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
  v.output("nested", DType::kUndefined);
  const auto vpath = v.save(dir.path(), "values.onnx");
  expect_error([&] { Session s(vpath); }, ErrorCode::kNotImplemented,
               {"'nested'", "not a numeric or string tensor type"});
}

TEST(ModelLoader, MapInputsAreDeclaredAndCheckedAtTheBoundary) {
  TempDir dir;
  ModelBuilder m;
  m.map_input("features", DType::kString, DType::kFloat32);
  auto& dv = m.node("DictVectorizer", {"features"}, {"row"}, "vectorize", "ai.onnx.ml");
  testing::set_attr(dv, "string_vocabulary", std::vector<std::string>{"a", "b"});
  m.opset("ai.onnx.ml", 1);
  m.output("row", DType::kFloat32);
  Session s(m.save(dir.path()));
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].dtype, DType::kMap);
  EXPECT_EQ(s.inputs()[0].map_key_dtype, DType::kString);
  EXPECT_EQ(s.inputs()[0].map_value_dtype, DType::kFloat32);
  const Tensor good = Tensor::map(Tensor::from_vector<std::string>({1}, {"b"}),
                                  Tensor::from_vector<float>({1}, {4}));
  Outputs o = s.run({{"features", good}});
  EXPECT_EQ(o[0].shape(), Shape({1, 2}));
  EXPECT_EQ(o[0].data<float>()[1], 4.0f);
  const Tensor wrong =
      Tensor::map(Tensor::from_vector<int64_t>({1}, {1}), Tensor::from_vector<float>({1}, {4}));
  expect_error(
      [&] {
        s.run({{"features", wrong}});
      },
      ErrorCode::kInvalidArgument, {"'features'", "map(int64, float32)", "map(string, float32)"});
  expect_error(
      [&] {
        s.run({{"features", floats({1}, {1})}});
      },
      ErrorCode::kInvalidArgument, {"'features'", "float32", "map"});
}

TEST(ModelLoader, SequenceInputsPassThroughAndAreCheckedAtTheBoundary) {
  TempDir dir;
  ModelBuilder m;
  auto* in = m.graph().add_input();
  in->set_name("seq");
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
  auto* out = m.graph().add_output();
  out->set_name("seq");
  Session s(m.save(dir.path()));
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].dtype, DType::kSequence);
  EXPECT_EQ(s.inputs()[0].element_dtype, DType::kFloat32);
  const Tensor seq = Tensor::sequence({floats({2}, {1, 2}), floats({3}, {3, 4, 5})});
  Outputs o = s.run({{"seq", seq}});
  ASSERT_TRUE(o[0].is_sequence());
  ASSERT_EQ(o[0].elements().size(), 2u);
  EXPECT_EQ(o[0].elements()[1].data<float>()[2], 5.0f);
  // A plain tensor where the model wants a sequence is refused at the boundary.
  expect_error(
      [&] {
        s.run({{"seq", floats({2}, {1, 2})}});
      },
      ErrorCode::kInvalidArgument, {"'seq'", "sequence"});
}

TEST(ModelLoader, StringInitializersAndTheExecutorGuard) {
  TempDir dir;
  ModelBuilder m;
  auto* t = m.graph().add_initializer();
  t->set_name("words");
  t->set_data_type(8);
  t->add_dims(2);
  t->add_string_data("monday");
  t->add_string_data("");
  m.output("words", DType::kString);
  // A byte-moving kernel must never receive string objects: the executor refuses them.
  m.node("Transpose", {"words"}, {"flipped"}, "mover");
  m.output("flipped", DType::kString);
  const auto path = m.save(dir.path());
  Session s(path, SessionOptions().providers({"reference"}));
  expect_error([&] { s.run({}); }, ErrorCode::kNotImplemented, {"mover", "string"});
}

TEST(ModelLoader, SubgraphsCaptureOuterValues) {
  TempDir dir;
  ModelBuilder m;
  m.input("c", DType::kBool, {});
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "x"}, {"twice"}, "outer_add");
  auto branch = [](const std::string& name, const std::string& captured) {
    onnx::GraphProto g;
    g.set_name(name);
    auto* n = g.add_node();
    n->set_op_type("Identity");
    n->add_input(captured);
    n->add_output(name + "_out");
    g.add_output()->set_name(name + "_out");
    return g;
  };
  auto& node = m.node("If", {"c"}, {"y"}, "choose");
  testing::set_attr(node, "then_branch", branch("then", "twice"));
  testing::set_attr(node, "else_branch", branch("else", "x"));
  Session s(m.save(dir.path()));
  const Tensor x = floats({2}, {1.5f, -3.0f});
  Outputs yes = s.run({{"c", Tensor::scalar(true)}, {"x", x}});
  Outputs no = s.run({{"c", Tensor::scalar(false)}, {"x", x}});
  EXPECT_EQ(yes[0].data<float>()[1], -6.0f);
  EXPECT_EQ(no[0].data<float>()[1], -3.0f);
}

// A SparseTensorProto of float `values` at `indices` (linear, or coordinates when
// `coordinate_rank` > 0) in a tensor of `dims`.
onnx::SparseTensorProto sparse(const std::string& name, const std::vector<float>& values,
                               const std::vector<int64_t>& indices,
                               const std::vector<int64_t>& dims, int coordinate_rank = 0) {
  onnx::SparseTensorProto sp;
  auto* v = sp.mutable_values();
  v->set_name(name);
  v->set_data_type(onnx::TensorProto::FLOAT);
  v->add_dims(static_cast<int64_t>(values.size()));
  for (float f : values) v->add_float_data(f);
  auto* i = sp.mutable_indices();
  i->set_data_type(onnx::TensorProto::INT64);
  i->add_dims(static_cast<int64_t>(values.size()));
  if (coordinate_rank > 0) i->add_dims(coordinate_rank);
  for (int64_t x : indices) i->add_int64_data(x);
  for (int64_t d : dims) sp.add_dims(d);
  return sp;
}

TEST(ModelLoader, SparseInitializersAreHeldDense) {
  // Linear indices for one, coordinates (unsorted) for the other; as ONNX Runtime reads them.
  TempDir dir;
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2, 3});
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "a"}, {"ax"});
  m.node("Add", {"ax", "b"}, {"y"});
  *m.graph().add_sparse_initializer() = sparse("a", {1.5f, -2}, {1, 5}, {2, 3});
  *m.graph().add_sparse_initializer() = sparse("b", {10, 20}, {1, 0, 0, 2}, {2, 3}, 2);
  Session s(m.save(dir.path()));
  Outputs out = s.run({{"x", floats({2, 3}, {0, 0, 0, 0, 0, 0})}});
  const float* y = out[0].data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{0, 1.5f, 20, 10, 0, -2}));
}

TEST(ModelLoader, ConstantSparseValueAndStringValues) {
  TempDir dir;
  ModelBuilder m(13);
  m.output("dense", DType::kFloat32);
  m.output("word", DType::kString);
  m.output("words", DType::kString);
  auto& c = m.node("Constant", {}, {"dense"}, "c");
  auto* a = c.add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  *a->mutable_sparse_tensor() = sparse("v", {7}, {3}, {4});
  testing::set_attr(m.node("Constant", {}, {"word"}, "w"), "value_string", std::string("hi"));
  testing::set_attr(m.node("Constant", {}, {"words"}, "ws"), "value_strings",
                    std::vector<std::string>{"a", "bc"});
  Session s(m.save(dir.path()));
  Outputs out = s.run({});
  EXPECT_EQ(out[0].shape(), (Shape{4}));
  EXPECT_EQ(std::vector<float>(out[0].data<float>(), out[0].data<float>() + 4),
            (std::vector<float>{0, 0, 0, 7}));
  EXPECT_EQ(out[1].data<std::string>()[0], "hi");
  EXPECT_EQ(out[2].data<std::string>()[1], "bc");
}

TEST(ModelLoader, BrokenSparseInitializersAreErrorsNamingThem) {
  TempDir dir;
  struct Case {
    const char* file;
    onnx::SparseTensorProto sp;
    std::vector<std::string> says;
  };
  onnx::SparseTensorProto wrong_dtype = sparse("w", {1}, {0}, {2});
  wrong_dtype.mutable_indices()->set_data_type(onnx::TensorProto::INT32);
  wrong_dtype.mutable_indices()->clear_int64_data();
  wrong_dtype.mutable_indices()->add_int32_data(0);
  const Case cases[] = {
      {"outside.onnx", sparse("w", {1, 2}, {0, 6}, {2, 3}), {"'w'", "index 1", "[2,3]"}},
      {"coordinate.onnx", sparse("w", {1}, {0, 3}, {2, 3}, 2), {"'w'", "outside"}},
      {"negative.onnx", sparse("w", {1}, {-1}, {2, 3}), {"'w'", "outside"}},
      {"rank.onnx", sparse("w", {1}, {0, 0, 0}, {2, 3}, 3), {"'w'", "[NNZ, 2]"}},
      {"dtype.onnx", wrong_dtype, {"'w'", "int32"}},
      {"huge.onnx", sparse("w", {1}, {0}, {int64_t{1} << 30, int64_t{1} << 30}), {"'w'", "4 GiB"}},
      {"negative_dim.onnx", sparse("w", {1}, {0}, {-2}), {"'w'", "negative"}},
  };
  for (const Case& c : cases) {
    ModelBuilder m;
    m.input("x", DType::kFloat32, {2, 3});
    m.output("y", DType::kFloat32);
    m.node("Add", {"x", "w"}, {"y"});
    *m.graph().add_sparse_initializer() = c.sp;
    const std::string path = m.save(dir.path(), c.file);
    std::vector<std::string> says{c.file};
    says.insert(says.end(), c.says.begin(), c.says.end());
    expect_error([&] { Session s(path); }, ErrorCode::kInvalidModel, says);
  }
}

}  // namespace
}  // namespace recur
