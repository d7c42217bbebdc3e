// DFT-20: the axis is input 2 (default -2); length-2 transforms worked by hand
// ([a, b] -> [a + b, a - b]).
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor signal() { return floats({1, 2, 2, 1}, {1, 2, 3, 4}); }

TEST(ReferenceDft, AxisInputDefaultsToMinusTwo) {
  OpTester("DFT", 20)
      .input(signal())
      .expect<float>({1, 2, 2, 2}, {3, 0, -1, 0, 7, 0, -1, 0})
      .check();
}

TEST(ReferenceDft, AxisInputChoosesTheAxis) {
  OpTester("DFT", 20)
      .input(signal())
      .omitted()
      .constant(tensor<int64_t>({}, {1}))
      .expect<float>({1, 2, 2, 2}, {4, 0, 6, 0, -2, 0, -2, 0})
      .check();
}

TEST(ReferenceDft, AxisMustNotBeTheComponentAxis) {
  OpTester("DFT", 20)
      .input(signal())
      .omitted()
      .constant(tensor<int64_t>({}, {3}))
      .expect_error(ErrorCode::kOutOfRange, "axis")
      .check();
}

}  // namespace
}  // namespace recur::test
