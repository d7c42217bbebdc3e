// Clip: attributes before opset 11, optional scalar inputs after, NaN propagation, integers.
// Expected values are numpy's (the expression is in the comment beside each).
#include <gtest/gtest.h>

#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

TEST(Clip, Opset6AttributesAndNaN) {
  // np.clip(np.array([-2, -0.5, 0, 0.5, 2, nan], np.float32), -1, 1)
  auto y = OpTester("Clip", 6)
               .input(tensor<float>({6}, {-2, -0.5f, 0, 0.5f, 2, kNaNf}))
               .attr("min", -1.0f)
               .attr("max", 1.0f)
               .run();
  expect_tensor<float>(y[0], {6}, {-1, -0.5f, 0, 0.5f, 1, kNaNf});
}

TEST(Clip, Opset1AbsentAttributeIsUnbounded) {
  // np.minimum(x, 0.5)
  auto y =
      OpTester("Clip", 1).input(tensor<float>({3}, {-1e30f, 0, 1e30f})).attr("max", 0.5f).run();
  expect_tensor<float>(y[0], {3}, {-1e30f, 0, 0.5f});
}

TEST(Clip, MinAboveMaxGivesMax) {
  // np.minimum(np.maximum(np.array([-2, 0, 2], np.float32), 1), 0)
  auto y = OpTester("Clip", 13)
               .input(tensor<float>({3}, {-2, 0, 2}))
               .input(tensor<float>({}, {1}))
               .input(tensor<float>({}, {0}))
               .run();
  expect_tensor<float>(y[0], {3}, {0, 0, 0});
}

TEST(Clip, NaNBoundPropagates) {
  // np.minimum(np.maximum(np.array([-2, 0, 2], np.float32), nan), 1)
  auto y = OpTester("Clip", 13)
               .input(tensor<float>({3}, {-2, 0, 2}))
               .input(tensor<float>({}, {kNaNf}))
               .input(tensor<float>({}, {1}))
               .run();
  expect_tensor<float>(y[0], {3}, {kNaNf, kNaNf, kNaNf});
}

TEST(Clip, Int8WithOnlyMax) {
  // np.minimum(np.array([-128, -5, 0, 5, 127], np.int8), np.int8(3))
  auto y = OpTester("Clip", 13)
               .input(tensor<int8_t>({5}, {-128, -5, 0, 5, 127}))
               .omitted()
               .input(tensor<int8_t>({}, {3}))
               .run();
  expect_tensor<int8_t>(y[0], {5}, {-128, -5, 0, 3, 3});
}

TEST(Clip, BoundMustBeAScalarOfTheSameDtype) {
  expect_error(
      OpTester("Clip", 13).input(tensor<float>({2}, {1, 2})).input(tensor<float>({2}, {0, 0})),
      ErrorCode::kInvalidArgument, "scalar");
  expect_error(
      OpTester("Clip", 13).input(tensor<float>({2}, {1, 2})).input(tensor<double>({}, {0})),
      ErrorCode::kInvalidArgument, "float64");
}

}  // namespace
}  // namespace recur::test
