// Bad input that recur-run cannot hand the library (issue 16's catalogue covers the rest
// through the CLI, tests/badinput/gen_catalogue.py): models from memory, feeds and run
// options only the C++ API can express. Each must be a recur::Error whose message names what
// was wrong.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::ModelBuilder;

// Y = Relu(X), X float32[2].
std::string relu_bytes() {
  ModelBuilder b;
  b.input("X", DType::kFloat32, {2});
  b.output("Y", DType::kFloat32);
  b.node("Relu", {"X"}, {"Y"}, "n_relu");
  return b.bytes();
}

Session relu_session() {
  const std::string bytes = relu_bytes();
  return Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
}

TEST(ApiBadInput, EmptyAndGarbageBytesAreNotAModel) {
  const std::string garbage(64, '\xff');
  for (const std::string& bytes : {std::string(), garbage}) {
    expect_error([&] { Session::from_bytes(bytes.data(), bytes.size()); }, ErrorCode::kInvalidModel,
                 {"not a valid ONNX model"});
  }
}

TEST(ApiBadInput, ExternalDataFromMemoryCannotLeaveBaseDir) {
  ModelBuilder b;
  b.input("X", DType::kFloat32, {2});
  b.output("Y", DType::kFloat32);
  onnx::TensorProto* c = b.graph().add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_dims(2);
  c->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = c->add_external_data();
  loc->set_key("location");
  loc->set_value("../../outside.bin");
  b.node("Add", {"X", "c"}, {"Y"}, "n_add");
  const std::string bytes = b.bytes();
  testing::TempDir dir;
  expect_error([&] { Session::from_bytes(bytes.data(), bytes.size(), {}, dir.path().string()); },
               ErrorCode::kInvalidModel, {"'c'", "../../outside.bin"});
}

TEST(ApiBadInput, UnknownRequestedOutputIsNamed) {
  Session s = relu_session();
  RunOptions ro;
  ro.outputs = {"Y", "no_such_output"};
  expect_error(
      [&] {
        s.run({{"X", testing::floats({2}, {1, -1})}}, ro);
      },
      ErrorCode::kInvalidArgument, {"no_such_output"});
}

TEST(ApiBadInput, EmptyFeedNameIsRefused) {
  Session s = relu_session();
  expect_error(
      [&] {
        s.run({{"X", testing::floats({2}, {1, -1})}, {"", testing::floats({2}, {0, 0})}});
      },
      ErrorCode::kInvalidArgument, {"''"});
}

TEST(ApiBadInput, SequenceFedWhereATensorIsExpected) {
  Session s = relu_session();
  const Tensor seq = Tensor::sequence({testing::floats({2}, {1, 2})}, DType::kFloat32);
  expect_error([&] { s.run({{"X", seq}}); }, ErrorCode::kInvalidArgument, {"'X'", "sequence"});
}

TEST(ApiBadInput, EmptyTensorHandleFedAsInput) {
  Session s = relu_session();
  expect_error([&] { s.run({{"X", Tensor()}}); }, ErrorCode::kInvalidArgument, {"'X'"});
}

TEST(ApiBadInput, MissingOutputByNameIsNamed) {
  Session s = relu_session();
  const Outputs outs = s.run({{"X", testing::floats({2}, {1, -1})}});
  expect_error([&] { (void)outs["no_such_output"]; }, ErrorCode::kInvalidArgument,
               {"no_such_output"});
}

TEST(ApiBadInput, SessionOptionsOutOfRange) {
  const std::string bytes = relu_bytes();
  expect_error(
      [&] { Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().threads(-1)); },
      ErrorCode::kInvalidArgument, {"threads", "-1"});
  expect_error(
      [&] {
        Session::from_bytes(bytes.data(), bytes.size(),
                            SessionOptions().set("reference.nope", "1"));
      },
      ErrorCode::kInvalidArgument, {"'reference'", "'nope'"});
  expect_error(
      [&] {
        Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"warpdrive"}));
      },
      ErrorCode::kInvalidArgument, {"warpdrive"});
}

// 0 or a negative bound used to switch the Loop guard off without a word.
TEST(ApiBadInput, MaxLoopIterationsMustBePositive) {
  const std::string bytes = relu_bytes();
  for (int64_t n : {int64_t{0}, int64_t{-3}}) {
    expect_error(
        [&] {
          Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().max_loop_iterations(n));
        },
        ErrorCode::kInvalidArgument, {"max_loop_iterations", std::to_string(n)});
  }
}

}  // namespace
}  // namespace recur
