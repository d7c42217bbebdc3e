// CumSum: exclusive and reverse, integer wrapping, axis forms. Expected values are numpy's
// (expressions in the comments).
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(CumSum, ExclusiveReverse) {
  // x = np.array([1, 2, 3, 4], np.float32); np.cumsum(x[::-1])[::-1] - x
  auto y = OpTester("CumSum", 14)
               .input(tensor<float>({4}, {1, 2, 3, 4}))
               .input(tensor<int32_t>({}, {0}))
               .attr("exclusive", int64_t{1})
               .attr("reverse", int64_t{1})
               .run();
  expect_tensor<float>(y[0], {4}, {9, 7, 4, 0});
}

TEST(CumSum, IntegerWraps) {
  // np.cumsum(np.array([2147483647, 1, 1], np.int32), dtype=np.int32)
  auto y = OpTester("CumSum", 14)
               .input(tensor<int32_t>({3}, {2147483647, 1, 1}))
               .input(tensor<int64_t>({1}, {0}))
               .run();
  expect_tensor<int32_t>(y[0], {3}, {2147483647, -2147483647 - 1, -2147483647});
}

TEST(CumSum, NegativeAxis) {
  // np.cumsum(np.array([[1, 2], [3, 4], [5, 6]], np.int64), axis=-2)
  auto y = OpTester("CumSum", 14)
               .input(tensor<int64_t>({3, 2}, {1, 2, 3, 4, 5, 6}))
               .input(tensor<int32_t>({}, {-2}))
               .run();
  expect_tensor<int64_t>(y[0], {3, 2}, {1, 2, 4, 6, 9, 12});
}

TEST(CumSum, AxisMustBeOneInteger) {
  expect_error(
      OpTester("CumSum", 14).input(tensor<float>({2}, {1, 2})).input(tensor<int64_t>({2}, {0, 0})),
      ErrorCode::kInvalidArgument, "scalar");
  expect_error(
      OpTester("CumSum", 14).input(tensor<float>({2}, {1, 2})).input(tensor<float>({}, {0})),
      ErrorCode::kInvalidArgument, "int64 or int32");
}

}  // namespace
}  // namespace recur::test
