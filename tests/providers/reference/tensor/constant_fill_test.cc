// ConstantFill, the experimental operator PyTorch writes for zero initial states at opsets 7
// and 8: its three ways of giving the shape, the dtype and value attributes (converted as Cast
// converts), and the combinations its definition rules out. tests/data/legacy_exports runs it
// inside PyTorch's exports.
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor i64(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// PyTorch's form: the shape as the values of a 1-D input, float zeros.
TEST(ConstantFill, InputAsShape) {
  OpTester("ConstantFill", 7)
      .input("s", i64({2, 3, 1}))
      .attr("input_as_shape", int64_t{1})
      .attr("dtype", int64_t{1})
      .attr("value", 0.0f)
      .output("y")
      .expect<float>({2, 3, 1}, std::vector<float>(6, 0.0f))
      .check();
  // int32 values too, with extra_shape after them; int32's -1.5 is -1.
  OpTester("ConstantFill", 7)
      .input("s", Tensor::from_vector<int32_t>({2}, {2, 1}))
      .attr("input_as_shape", int64_t{1})
      .attr("extra_shape", std::vector<int64_t>{2})
      .attr("dtype", int64_t{6})
      .attr("value", -1.5f)
      .output("y")
      .expect<int32_t>({2, 1, 2}, std::vector<int32_t>(4, -1))
      .check();
}

TEST(ConstantFill, ShapeOfTheInputAndExtraShape) {
  OpTester("ConstantFill", 7)
      .input("x", Tensor::from_vector<float>({2, 1}, {5.0f, 6.0f}))
      .attr("extra_shape", std::vector<int64_t>{3})
      .attr("dtype", int64_t{7})
      .attr("value", 2.9f)
      .output("y")
      .expect<int64_t>({2, 1, 3}, std::vector<int64_t>(6, 2))
      .check();
}

TEST(ConstantFill, ShapeAttributeWithoutInputAndDefaults) {
  OpTester("ConstantFill", 7)
      .attr("shape", std::vector<int64_t>{3, 1})
      .attr("dtype", int64_t{9})
      .attr("value", 1.0f)
      .output("y")
      .expect<bool>({3, 1}, {true, true, true})
      .check();
  // dtype float and value 0 by default.
  OpTester("ConstantFill", 8)
      .attr("shape", std::vector<int64_t>{2})
      .output("y")
      .expect<float>({2}, {0.0f, 0.0f})
      .check();
}

TEST(ConstantFill, WhatTheDefinitionRulesOut) {
  OpTester("ConstantFill", 7)
      .input("s", i64({2}))
      .attr("shape", std::vector<int64_t>{2})
      .output("y")
      .expect_error(ErrorCode::kInvalidModel, "cannot be set with an input")
      .check();
  OpTester("ConstantFill", 7)
      .attr("extra_shape", std::vector<int64_t>{2})
      .output("y")
      .expect_error(ErrorCode::kInvalidModel, "need the input")
      .check();
  OpTester("ConstantFill", 7)
      .attr("shape", std::vector<int64_t>{2})
      .attr("dtype", int64_t{8})
      .output("y")
      .expect_error(ErrorCode::kInvalidModel, "dtype 8 is not a numeric or bool type")
      .check();
  OpTester("ConstantFill", 7)
      .input("s", Tensor::from_vector<int64_t>({1, 2}, {2, 2}))
      .attr("input_as_shape", int64_t{1})
      .output("y")
      .expect_error(ErrorCode::kInvalidArgument, "1-D int32 or int64")
      .check();
  // A static shape too large for memory is refused at load, before any plan sizes it.
  OpTester("ConstantFill", 7)
      .attr("shape", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40})
      .output("y")
      .expect_error(ErrorCode::kInvalidModel, "would exceed")
      .check();
  OpTester("ConstantFill", 7)
      .input("s", i64({2, -3}))
      .attr("input_as_shape", int64_t{1})
      .output("y")
      .expect_error(ErrorCode::kInvalidArgument, "negative")
      .check();
}

}  // namespace
}  // namespace recur::test
