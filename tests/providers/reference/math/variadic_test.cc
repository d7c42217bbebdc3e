// Min, Max, Sum, Mean: NaN propagation, broadcasting of several inputs, equal shapes before
// opset 8. Expected values are numpy's (the expression is in the comment beside each).
#include <gtest/gtest.h>

#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

TEST(Variadic, MaxPropagatesNaN) {
  // np.maximum(np.array([1, nan, 3], np.float32), np.array([2, 2, nan], np.float32))
  auto y = OpTester("Max", 13)
               .input(tensor<float>({3}, {1, kNaNf, 3}))
               .input(tensor<float>({3}, {2, 2, kNaNf}))
               .run();
  expect_tensor<float>(y[0], {3}, {2, kNaNf, kNaNf});
}

TEST(Variadic, MinOfThreeBroadcasts) {
  // np.minimum(np.minimum(np.array([[5], [1]], np.int32), np.array([3, 4, 0], np.int32)),
  //            np.array([2], np.int32))
  auto y = OpTester("Min", 13)
               .input(tensor<int32_t>({2, 1}, {5, 1}))
               .input(tensor<int32_t>({3}, {3, 4, 0}))
               .input(tensor<int32_t>({1}, {2}))
               .run();
  expect_tensor<int32_t>(y[0], {2, 3}, {2, 2, 0, 1, 1, 0});
}

TEST(Variadic, MeanOfFloat16) {
  // ((a + b + c) / 3).astype(np.float16) in float64, a = [1, 2], b = [[0.5], [3]], c = [0.25]
  auto y = OpTester("Mean", 13)
               .input(tensor<Float16>({2}, {Float16(1.0f), Float16(2.0f)}))
               .input(tensor<Float16>({2, 1}, {Float16(0.5f), Float16(3.0f)}))
               .input(tensor<Float16>({1}, {Float16(0.25f)}))
               .run();
  expect_tensor<Float16>(
      y[0], {2, 2}, {Float16(0.5835f), Float16(0.9165f), Float16(1.417f), Float16(1.75f)}, 1e-3);
}

TEST(Variadic, SumBroadcasts) {
  // np.array([1, 2, 3], np.float64) + np.array([[10], [20]], np.float64)
  auto y = OpTester("Sum", 13)
               .input(tensor<double>({3}, {1, 2, 3}))
               .input(tensor<double>({2, 1}, {10, 20}))
               .run();
  expect_tensor<double>(y[0], {2, 3}, {11, 12, 13, 21, 22, 23});
}

TEST(Variadic, OneInputIsACopy) {
  auto y = OpTester("Max", 8).input(tensor<float>({2}, {3, -1})).run();
  expect_tensor<float>(y[0], {2}, {3, -1});
}

TEST(Variadic, Opset6NeedsEqualShapes) {
  expect_error(
      OpTester("Sum", 6).input(tensor<float>({3}, {1, 2, 3})).input(tensor<float>({1}, {1})),
      ErrorCode::kInvalidArgument, "equal shapes");
}

TEST(Variadic, DtypesMustMatch) {
  expect_error(OpTester("Max", 13).input(tensor<float>({1}, {1})).input(tensor<int32_t>({1}, {1})),
               ErrorCode::kInvalidArgument, "int32");
}

}  // namespace
}  // namespace recur::test
