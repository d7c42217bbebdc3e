// Swish (opset 24): x * sigmoid(alpha * x). Expected values: numpy float64
// x / (1 + np.exp(-alpha * x)).
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Swish, DefaultAlphaIsOne) {
  OpTester("Swish", 24)
      .input(tensor<float>({4}, {-2, 0, 1, 3}))
      .expect<float>({4}, {-0.2384058440442351f, 0.0f, 0.7310585786300049f, 2.8577223804672998f},
                     1e-6)
      .check();
}

TEST(Swish, Alpha) {
  OpTester("Swish", 24)
      .input(tensor<double>({4}, {-2, 0, 1, 3}))
      .attr("alpha", 0.5f)
      .expect<double>({4}, {-0.5378828427399902, 0.0, 0.6224593312018546, 2.452723428580931}, 1e-12)
      .check();
}

TEST(Swish, LargeNegativeInputGivesZeroNotNaN) {
  // exp(1000) overflows to inf: x / inf is -0, which compares equal to 0.
  OpTester("Swish", 24).input(tensor<float>({1}, {-1000})).expect<float>({1}, {0.0f}).check();
}

TEST(Swish, IntegersAreRefused) {
  expect_error(OpTester("Swish", 24).input(tensor<int32_t>({1}, {1})), ErrorCode::kNotImplemented,
               "dtype int32 is not supported");
}

}  // namespace
}  // namespace recur::test
