// Unary functions and activations: rounding, integer edge cases, NaN and overflow-prone inputs.
// Expected values are numpy's (the expression is in the comment beside each).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

TEST(Unary, RoundHalfToEven) {
  // np.round(np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, nan], np.float32))
  auto y = OpTester("Round", 11)
               .input(tensor<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, kNaNf}))
               .run();
  expect_tensor<float>(y[0], {8}, {0, 2, 2, -0.0f, -2, 2, -3, kNaNf});
}

TEST(Unary, IntegerAbsAndNegWrap) {
  // np.abs(np.array([-128, -1, 5], np.int8))
  auto y = OpTester("Abs", 13).input(tensor<int8_t>({3}, {-128, -1, 5})).run();
  expect_tensor<int8_t>(y[0], {3}, {-128, 1, 5});
  // np.negative(np.array([-2**31, 5], np.int32))
  y = OpTester("Neg", 13)
          .input(tensor<int32_t>({2}, {std::numeric_limits<int32_t>::min(), 5}))
          .run();
  expect_tensor<int32_t>(y[0], {2}, {std::numeric_limits<int32_t>::min(), -5});
}

TEST(Unary, ReluAndSignKeepNaN) {
  // np.maximum(np.array([nan, -1, 2], np.float32), np.float32(0))
  auto y = OpTester("Relu", 14).input(tensor<float>({3}, {kNaNf, -1, 2})).run();
  expect_tensor<float>(y[0], {3}, {kNaNf, 0, 2});
  // np.sign(np.array([-2, 0, 3, nan], np.float32))
  y = OpTester("Sign", 13).input(tensor<float>({4}, {-2, 0, 3, kNaNf})).run();
  expect_tensor<float>(y[0], {4}, {-1, 0, 1, kNaNf});
}

// Zeros keep the sign numpy gives them (ONNX Runtime 1.30 gives the same, measured): a test of
// the sign bit, since -0.0f == 0.0f.
TEST(Unary, ZeroSignsAsNumpy) {
  struct Case {
    const char* op;
    int opset;
    std::vector<float> x;
    std::vector<bool> negative;  // std::signbit of each zero in the output
  };
  const Case cases[] = {
      // np.round(np.array([-0.4, -0.5, -0.0, 0.4, 0.5], np.float32))
      {"Round", 11, {-0.4f, -0.5f, -0.0f, 0.4f, 0.5f}, {true, true, true, false, false}},
      // np.sign(np.array([-0.0, 0.0], np.float32))
      {"Sign", 13, {-0.0f, 0.0f}, {false, false}},
      // np.negative, np.sin, np.tanh of np.array([0.0, -0.0], np.float32)
      {"Neg", 13, {0.0f, -0.0f}, {true, false}},
      {"Sin", 7, {0.0f, -0.0f}, {false, true}},
      {"Tanh", 13, {0.0f, -0.0f}, {false, true}},
  };
  for (const Case& c : cases) {
    const int64_t n = static_cast<int64_t>(c.x.size());
    auto y = OpTester(c.op, c.opset).input(tensor<float>({n}, c.x)).run();
    const float* p = y[0].data<float>();
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(p[i], 0.0f) << c.op << " of " << c.x[i];
      EXPECT_EQ(std::signbit(p[i]), c.negative[i]) << c.op << " of " << c.x[i];
    }
  }
}

TEST(Unary, ReluOnIntegersFromOpset14) {
  // np.maximum(np.array([-3, 0, 7], np.int8), 0)
  auto y = OpTester("Relu", 14).input(tensor<int8_t>({3}, {-3, 0, 7})).run();
  expect_tensor<int8_t>(y[0], {3}, {0, 0, 7});
}

TEST(Unary, SigmoidAndSoftplusDoNotOverflow) {
  // 1 / (1 + np.exp(-np.array([-1000, 0, 1000, -5], np.float64)))
  auto y = OpTester("Sigmoid", 13).input(tensor<double>({4}, {-1000, 0, 1000, -5})).run();
  expect_tensor<double>(y[0], {4}, {0, 0.5, 1, 0.0066928509242848554}, 1e-12);
  // np.logaddexp(0, np.array([-1000, 0, 1000, 2], np.float64))
  y = OpTester("Softplus", 1).input(tensor<double>({4}, {-1000, 0, 1000, 2})).run();
  expect_tensor<double>(y[0], {4}, {0, 0.69314718055994529, 1000, 2.1269280110429727}, 1e-12);
}

TEST(Unary, IsInfDetectsOneSide) {
  // np.isposinf(np.array([inf, -inf, nan, 1], np.float32))
  auto y = OpTester("IsInf", 10)
               .input(tensor<float>({4}, {kInff, -kInff, kNaNf, 1}))
               .attr("detect_negative", int64_t{0})
               .run();
  expect_tensor<bool>(y[0], {4}, {true, false, false, false});
}

TEST(Unary, ShrinkOnIntegers) {
  // x = np.array([-5, -1, 0, 1, 5]); np.where(x < -1.5, x + 1.5, np.where(x > 1.5, x - 1.5, 0))
  //   .astype(np.int8)
  auto y = OpTester("Shrink", 9)
               .input(tensor<int8_t>({5}, {-5, -1, 0, 1, 5}))
               .attr("lambd", 1.5f)
               .attr("bias", 1.5f)
               .run();
  expect_tensor<int8_t>(y[0], {5}, {-3, 0, 0, 0, 3});
}

TEST(Unary, EmptyTensor) {
  auto y = OpTester("Exp", 13).input(tensor<float>({0, 3}, {})).run();
  expect_tensor<float>(y[0], {0, 3}, {});
}

TEST(Unary, Float16ComputesInFloat) {
  // np.exp(np.array([0, 1, -1], np.float16)) -> float16 [1, 2.719, 0.3679]
  auto y = OpTester("Exp", 13)
               .input(tensor<Float16>({3}, {Float16(0.0f), Float16(1.0f), Float16(-1.0f)}))
               .run();
  expect_tensor<Float16>(y[0], {3}, {Float16(1.0f), Float16(2.719f), Float16(0.3679f)}, 1e-3);
}

TEST(Unary, UnsupportedDtypeIsAnError) {
  expect_error(OpTester("Sqrt", 13).input(tensor<int32_t>({1}, {4})), ErrorCode::kNotImplemented,
               "int32");
}

}  // namespace
}  // namespace recur::test
