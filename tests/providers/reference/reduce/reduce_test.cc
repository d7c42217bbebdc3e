// The Reduce* operators: axes as attribute and input, keepdims, noop_with_empty_axes, empty
// sets, NaN, integer wrapping, errors, static shapes. Expected values are numpy's
// (expressions in the comments).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

Tensor x23() { return tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}); }

std::vector<double> ramp24() {  // np.arange(24.0).reshape(2, 3, 4) - 11.5
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[static_cast<size_t>(i)] = i - 11.5;
  return v;
}

TEST(Reduce, SumWithoutAxesReducesEverything) {
  // np.sum(x, keepdims=True)
  auto y = OpTester("ReduceSum", 13).input(x23()).run();
  expect_tensor<float>(y[0], {1, 1}, {21});
}

TEST(Reduce, SumAxesFromInput) {
  // np.sum(x, axis=1)
  auto y = OpTester("ReduceSum", 13)
               .input(x23())
               .constant(tensor<int64_t>({1}, {1}))
               .attr("keepdims", int64_t{0})
               .run();
  expect_tensor<float>(y[0], {2}, {6, 15});
}

TEST(Reduce, SumAxesFromAttributeBeforeOpset13) {
  // np.sum(x, axis=-1, keepdims=True)
  auto y = OpTester("ReduceSum", 11).input(x23()).attr("axes", std::vector<int64_t>{-1}).run();
  expect_tensor<float>(y[0], {2, 1}, {6, 15});
}

TEST(Reduce, NoopWithEmptyAxesReducesEachElementAlone) {
  auto y = OpTester("ReduceSum", 13)
               .input(x23())
               .constant(tensor<int64_t>({0}, {}))
               .attr("noop_with_empty_axes", int64_t{1})
               .run();
  expect_tensor<float>(y[0], {2, 3}, {1, 2, 3, 4, 5, 6});
  y = OpTester("ReduceSum", 13).input(x23()).attr("noop_with_empty_axes", int64_t{1}).run();
  expect_tensor<float>(y[0], {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(Reduce, MaxPropagatesNaN) {
  // np.max(np.array([[1, nan, 3], [4, 5, 6]], np.float32), axis=1)
  auto y = OpTester("ReduceMax", 13)
               .input(tensor<float>({2, 3}, {1, kNaNf, 3, 4, 5, 6}))
               .attr("axes", std::vector<int64_t>{1})
               .attr("keepdims", int64_t{0})
               .run();
  expect_tensor<float>(y[0], {2}, {kNaNf, 6});
}

TEST(Reduce, EmptySetsGiveTheIdentity) {
  auto run = [](const char* op) {
    return OpTester(op, 11)
        .input(tensor<float>({2, 0}, {}))
        .attr("axes", std::vector<int64_t>{1})
        .attr("keepdims", int64_t{0})
        .run()[0];
  };
  // np.sum(np.zeros((2, 0), np.float32), axis=1), np.prod(...), np.mean(...),
  // np.log(np.sum(np.exp(...), axis=1)); the max of nothing is -inf (ONNX opset 18).
  expect_tensor<float>(run("ReduceSum"), {2}, {0, 0});
  expect_tensor<float>(run("ReduceProd"), {2}, {1, 1});
  expect_tensor<float>(run("ReduceMean"), {2}, {kNaNf, kNaNf});
  expect_tensor<float>(run("ReduceLogSumExp"), {2}, {-kInff, -kInff});
  expect_tensor<float>(run("ReduceMax"), {2}, {-kInff, -kInff});
  expect_tensor<float>(run("ReduceMin"), {2}, {kInff, kInff});
}

TEST(Reduce, IntegerMeanOfAnEmptySetIsAnError) {
  expect_error(OpTester("ReduceMean", 13)
                   .input(tensor<int32_t>({2, 0}, {}))
                   .attr("axes", std::vector<int64_t>{1}),
               ErrorCode::kInvalidArgument, "empty set");
}

TEST(Reduce, IntegerArithmetic) {
  // np.sum(np.array([2147483647, 1, 5], np.int32), dtype=np.int32)
  auto y = OpTester("ReduceSum", 13)
               .input(tensor<int32_t>({3}, {2147483647, 1, 5}))
               .attr("keepdims", int64_t{0})
               .run();
  expect_tensor<int32_t>(y[0], {}, {-2147483643});
  // np.trunc(np.mean(np.array([[1, 2], [-1, -2]], np.int32), axis=1)).astype(np.int32)
  y = OpTester("ReduceMean", 13)
          .input(tensor<int32_t>({2, 2}, {1, 2, -1, -2}))
          .attr("axes", std::vector<int64_t>{1})
          .attr("keepdims", int64_t{0})
          .run();
  expect_tensor<int32_t>(y[0], {2}, {1, -1});
  // np.prod(np.array([[2, 3], [-4, 5]], np.int64), axis=0)
  y = OpTester("ReduceProd", 13)
          .input(tensor<int64_t>({2, 2}, {2, 3, -4, 5}))
          .attr("axes", std::vector<int64_t>{0})
          .attr("keepdims", int64_t{0})
          .run();
  expect_tensor<int64_t>(y[0], {2}, {-8, 15});
  // np.min(np.array([[7, 3], [250, 9]], np.uint8), axis=1)
  y = OpTester("ReduceMin", 13)
          .input(tensor<uint8_t>({2, 2}, {7, 3, 250, 9}))
          .attr("axes", std::vector<int64_t>{1})
          .attr("keepdims", int64_t{0})
          .run();
  expect_tensor<uint8_t>(y[0], {2}, {3, 9});
  // np.sum(np.square(np.array([[3, -4], [70000, 0]], np.int32)), axis=1, dtype=np.int32)
  y = OpTester("ReduceSumSquare", 13)
          .input(tensor<int32_t>({2, 2}, {3, -4, 70000, 0}))
          .attr("axes", std::vector<int64_t>{1})
          .attr("keepdims", int64_t{0})
          .run();
  expect_tensor<int32_t>(y[0], {2}, {25, 605032704});
}

TEST(Reduce, LogSumExpOfLargeValues) {
  // np.logaddexp(1000.0, 1000.0)
  auto y = OpTester("ReduceLogSumExp", 13).input(tensor<double>({2}, {1000, 1000})).run();
  expect_tensor<double>(y[0], {1}, {1000.6931471805599}, 1e-12);
}

TEST(Reduce, NormsAndLogSum) {
  // np.sqrt(np.sum(y * y, axis=-1)) with y = np.arange(24.0).reshape(2, 3, 4) - 11.5
  auto y = OpTester("ReduceL2", 13)
               .input(tensor<double>({2, 3, 4}, ramp24()))
               .attr("axes", std::vector<int64_t>{-1})
               .attr("keepdims", int64_t{0})
               .run();
  expect_tensor<double>(y[0], {2, 3},
                        {20.12461179749811, 12.206555615733702, 4.58257569495584, 4.58257569495584,
                         12.206555615733702, 20.12461179749811},
                        1e-12);
  // np.sum(np.abs(y), axis=(0, 2), keepdims=True)
  y = OpTester("ReduceL1", 13)
          .input(tensor<double>({2, 3, 4}, ramp24()))
          .attr("axes", std::vector<int64_t>{0, 2})
          .run();
  expect_tensor<double>(y[0], {1, 3, 1}, {48, 48, 48});
  // np.log(np.sum(x, axis=0))
  y = OpTester("ReduceLogSum", 13)
          .input(tensor<double>({2, 3}, {1, 2, 3, 4, 5, 6}))
          .attr("axes", std::vector<int64_t>{0})
          .attr("keepdims", int64_t{0})
          .run();
  expect_tensor<double>(y[0], {3}, {1.6094379124341003, 1.9459101490553132, 2.197224577336219},
                        1e-12);
}

TEST(Reduce, BadAxesAreErrors) {
  expect_error(
      OpTester("ReduceSum", 13).dynamic_shapes().input(x23()).input(tensor<int64_t>({2}, {1, -1})),
      ErrorCode::kInvalidArgument, "twice");
  expect_error(
      OpTester("ReduceSum", 13).dynamic_shapes().input(x23()).input(tensor<int64_t>({1}, {-3})),
      ErrorCode::kOutOfRange, "out of range");
  // Constant axes are checked by shape inference, at load.
  expect_error(OpTester("ReduceMean", 13).input(x23()).attr("axes", std::vector<int64_t>{2}),
               ErrorCode::kInvalidModel, "out of range");
  // From opset 13 ReduceSum takes its axes as an input only: the schema check refuses it.
  expect_error(OpTester("ReduceSum", 13).input(x23()).attr("axes", std::vector<int64_t>{0}),
               ErrorCode::kInvalidModel, "unknown attribute 'axes'");
}

TEST(Reduce, StaticShapeFromConstantAxes) {
  auto s = OpTester("ReduceSum", 13)
               .input(tensor<float>({2, 3, 4}, std::vector<float>(24, 1)))
               .constant(tensor<int64_t>({1}, {-2}))
               .attr("keepdims", int64_t{0})
               .session();
  EXPECT_EQ(s.outputs()[0].shape_string(), "[2,4]");
  s = OpTester("ReduceMax", 11)
          .input(tensor<float>({2, 3, 4}, std::vector<float>(24, 1)))
          .attr("axes", std::vector<int64_t>{0, 2})
          .session();
  EXPECT_EQ(s.outputs()[0].shape_string(), "[1,3,1]");
}

TEST(Reduce, MaxAndMinOfBoolFromOpset20) {
  // np.any / np.all along axis 1 of [[T, F], [F, F]].
  const Tensor b = tensor<bool>({2, 2}, {true, false, false, false});
  auto mx = OpTester("ReduceMax", 20)
                .input(b)
                .constant(tensor<int64_t>({1}, {1}))
                .attr("keepdims", int64_t{0})
                .run();
  expect_tensor<bool>(mx[0], {2}, {true, false});
  auto mn = OpTester("ReduceMin", 20)
                .input(b)
                .constant(tensor<int64_t>({1}, {1}))
                .attr("keepdims", int64_t{0})
                .run();
  expect_tensor<bool>(mn[0], {2}, {false, false});
}

TEST(Reduce, BoolBeforeOpset20IsRefused) {
  OpTester("ReduceMax", 18)
      .input(tensor<bool>({2}, {true, false}))
      .expect_error(ErrorCode::kNotImplemented, "bool")
      .check();
}

}  // namespace
}  // namespace recur::test
