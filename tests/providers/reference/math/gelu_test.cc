// Gelu (opset 20), exact and tanh-approximated, and Mish (opset 18). Expected values:
// 0.5 * x * (1 + erf(x / sqrt(2))), 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))),
// x * tanh(log(1 + exp(x))), evaluated in double with Python's math module.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Gelu, ExactByDefault) {
  OpTester("Gelu", 20)
      .input(tensor<float>({3}, {-1, 0, 1}))
      .expect<float>({3}, {-0.15865525393145707f, 0.0f, 0.8413447460685429f}, 1e-6)
      .check();
}

TEST(Gelu, TanhApproximation) {
  OpTester("Gelu", 20)
      .input(tensor<double>({2}, {-1, 1}))
      .attr("approximate", std::string("tanh"))
      .expect<double>({2}, {-0.15880800939172324, 0.8411919906082768}, 1e-12)
      .check();
}

TEST(Gelu, UnknownApproximationIsRefused) {
  OpTester("Gelu", 20)
      .input(tensor<float>({1}, {1}))
      .attr("approximate", std::string("fast"))
      .expect_error(ErrorCode::kInvalidModel, "approximate")
      .check();
}

TEST(Mish, Values) {
  OpTester("Mish", 18)
      .input(tensor<float>({3}, {-1, 0, 1}))
      .expect<float>({3}, {-0.30340146137410895f, 0.0f, 0.8650983882673103f}, 1e-6)
      .check();
}

}  // namespace
}  // namespace recur::test
