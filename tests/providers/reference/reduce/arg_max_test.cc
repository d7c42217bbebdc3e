// ArgMax and ArgMin: select_last_index, NaN, keepdims, empty axes. Expected values are numpy's
// (expressions in the comments).
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

TEST(ArgMax, SelectLastIndex) {
  // x = np.array([1, 3, 3, 2]); np.argmax(x) and x.size - 1 - np.argmax(x[::-1])
  auto y = OpTester("ArgMax", 13).input(tensor<int32_t>({4}, {1, 3, 3, 2})).run();
  expect_tensor<int64_t>(y[0], {1}, {1});
  y = OpTester("ArgMax", 13)
          .input(tensor<int32_t>({4}, {1, 3, 3, 2}))
          .attr("select_last_index", int64_t{1})
          .run();
  expect_tensor<int64_t>(y[0], {1}, {2});
}

TEST(ArgMax, ArgMinTakesNaN) {
  // np.argmin(np.array([1, nan, 0, nan], np.float32))
  auto y = OpTester("ArgMin", 13)
               .input(tensor<float>({4}, {1, kNaNf, 0, kNaNf}))
               .attr("keepdims", int64_t{0})
               .run();
  expect_tensor<int64_t>(y[0], {}, {1});
}

TEST(ArgMax, AlongAMiddleAxis) {
  // np.argmax(np.array([[[1, 9], [5, 2], [3, 7]]], np.int32), axis=1)
  auto y = OpTester("ArgMax", 11)
               .input(tensor<int32_t>({1, 3, 2}, {1, 9, 5, 2, 3, 7}))
               .attr("axis", int64_t{1})
               .attr("keepdims", int64_t{0})
               .run();
  expect_tensor<int64_t>(y[0], {1, 2}, {1, 0});
}

TEST(ArgMax, EmptyAxisIsAnError) {
  expect_error(OpTester("ArgMax", 13).input(tensor<float>({0, 2}, {})), ErrorCode::kInvalidArgument,
               "empty");
}

TEST(ArgMax, StaticShape) {
  auto s = OpTester("ArgMin", 13)
               .input(tensor<float>({2, 3, 4}, std::vector<float>(24, 0)))
               .attr("axis", int64_t{-2})
               .attr("keepdims", int64_t{0})
               .session();
  EXPECT_EQ(s.outputs()[0].dtype, DType::kInt64);
  EXPECT_EQ(s.outputs()[0].shape_string(), "[2,4]");
}

}  // namespace
}  // namespace recur::test
