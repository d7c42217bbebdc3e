// Broadcasting binary operators: errors, integer edge cases, legacy broadcasting, mixed-dtype
// Pow. Expected values are numpy's (the expression is in the comment beside each).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Binary, BroadcastMismatchIsAnErrorNamingTheNode) {
  // Found by shape inference when the model declares the shapes...
  expect_error(OpTester("Add", 13)
                   .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(tensor<float>({4}, {1, 2, 3, 4})),
               ErrorCode::kInvalidModel, "node 'node' (Add)");
  // ...and by the kernel when it does not.
  expect_error(OpTester("Add", 13)
                   .dynamic_shapes()
                   .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(tensor<float>({4}, {1, 2, 3, 4})),
               ErrorCode::kInvalidArgument, "node 'node' (Add)");
}

TEST(Binary, DtypeMismatchIsAnError) {
  expect_error(OpTester("Mul", 13).input(tensor<float>({1}, {1})).input(tensor<double>({1}, {1})),
               ErrorCode::kInvalidArgument, "float64");
}

TEST(Binary, IntegerDivisionByZeroIsAnError) {
  expect_error(
      OpTester("Div", 14).input(tensor<int32_t>({2}, {1, 2})).input(tensor<int32_t>({2}, {1, 0})),
      ErrorCode::kInvalidArgument, "division by zero");
}

TEST(Binary, SignedOverflowWraps) {
  // np.array([2147483647, -2147483648], np.int32) + np.array([1, -1], np.int32)
  auto y = OpTester("Add", 14)
               .input(tensor<int32_t>({2}, {2147483647, std::numeric_limits<int32_t>::min()}))
               .input(tensor<int32_t>({2}, {1, -1}))
               .run();
  expect_tensor<int32_t>(y[0], {2}, {std::numeric_limits<int32_t>::min(), 2147483647});
  // np.array([300, -300], np.int16) * np.array([300, 300], np.int16)
  y = OpTester("Mul", 14)
          .input(tensor<int16_t>({2}, {300, -300}))
          .input(tensor<int16_t>({2}, {300, 300}))
          .run();
  expect_tensor<int16_t>(y[0], {2}, {24464, -24464});
  // np.array([65535], np.uint16) * np.array([65535], np.uint16)
  y = OpTester("Mul", 14)
          .input(tensor<uint16_t>({1}, {65535}))
          .input(tensor<uint16_t>({1}, {65535}))
          .run();
  expect_tensor<uint16_t>(y[0], {1}, {1});
  // INT_MIN / -1 wraps to INT_MIN (the truncated quotient 2^31 taken modulo 2^32).
  y = OpTester("Div", 14)
          .input(tensor<int32_t>({1}, {std::numeric_limits<int32_t>::min()}))
          .input(tensor<int32_t>({1}, {-1}))
          .run();
  expect_tensor<int32_t>(y[0], {1}, {std::numeric_limits<int32_t>::min()});
}

TEST(Binary, EmptyTensorsBroadcast) {
  auto y = OpTester("Sub", 13)
               .input(tensor<float>({0, 3}, {}))
               .input(tensor<float>({3}, {1, 2, 3}))
               .run();
  expect_tensor<float>(y[0], {0, 3}, {});
}

TEST(Binary, LegacyBroadcastWithAxis) {
  std::vector<float> a(120), b(12);
  for (int i = 0; i < 120; ++i) a[static_cast<size_t>(i)] = static_cast<float>(i);
  for (int i = 0; i < 12; ++i) b[static_cast<size_t>(i)] = static_cast<float>(i);
  auto y = OpTester("Add", 6)
               .input(tensor<float>({2, 3, 4, 5}, a))
               .input(tensor<float>({3, 4}, b))
               .attr("broadcast", int64_t{1})
               .attr("axis", int64_t{1})
               .run();
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 4, 5}));
  const float* p = y[0].data<float>();
  // a + b[None, :, :, None]: first three [0, 1, 2], last three [128, 129, 130], sum 7800.
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[2], 2);
  EXPECT_EQ(p[117], 128);
  EXPECT_EQ(p[119], 130);
  double sum = 0;
  for (int i = 0; i < 120; ++i) sum += p[i];
  EXPECT_EQ(sum, 7800);
}

TEST(Binary, LegacyWithoutBroadcastNeedsEqualShapes) {
  expect_error(OpTester("Add", 6)
                   .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(tensor<float>({3}, {1, 2, 3})),
               ErrorCode::kInvalidArgument, "broadcast=0");
}

TEST(Binary, LegacyAndWithAxis) {
  // A [2,3] and B [2] at axis 0: a & b[:, None]
  auto y = OpTester("And", 1)
               .input(tensor<bool>({2, 3}, {true, true, false, true, true, true}))
               .input(tensor<bool>({2}, {true, false}))
               .attr("broadcast", int64_t{1})
               .attr("axis", int64_t{0})
               .run();
  expect_tensor<bool>(y[0], {2, 3}, {true, true, false, false, false, false});
}

TEST(Mod, IntegerSignsFollowTheDivisor) {
  // np.mod(np.array([-7, 7, -7, 7], np.int32), np.array([3, -3, -3, 3], np.int32))
  auto y = OpTester("Mod", 13)
               .input(tensor<int32_t>({4}, {-7, 7, -7, 7}))
               .input(tensor<int32_t>({4}, {3, -3, -3, 3}))
               .run();
  expect_tensor<int32_t>(y[0], {4}, {2, -2, -1, 1});
  // np.fmod(same)
  y = OpTester("Mod", 13)
          .input(tensor<int32_t>({4}, {-7, 7, -7, 7}))
          .input(tensor<int32_t>({4}, {3, -3, -3, 3}))
          .attr("fmod", int64_t{1})
          .run();
  expect_tensor<int32_t>(y[0], {4}, {-1, 1, -1, 1});
}

TEST(Mod, IntMinByMinusOneIsZero) {
  // np.mod(np.array([-2**31], np.int32), np.array([-1], np.int32))
  auto y = OpTester("Mod", 13)
               .input(tensor<int32_t>({1}, {std::numeric_limits<int32_t>::min()}))
               .input(tensor<int32_t>({1}, {-1}))
               .run();
  expect_tensor<int32_t>(y[0], {1}, {0});
}

TEST(Mod, ByZeroIsAnError) {
  expect_error(
      OpTester("Mod", 13).input(tensor<uint8_t>({2}, {3, 4})).input(tensor<uint8_t>({1}, {0})),
      ErrorCode::kInvalidArgument, "modulo by zero");
}

TEST(Mod, FloatWithoutFmodFollowsNumpy) {
  // np.mod(np.array([-7.5, 7.5], np.float32), np.array([2, -2], np.float32))
  auto y = OpTester("Mod", 13)
               .input(tensor<float>({2}, {-7.5f, 7.5f}))
               .input(tensor<float>({2}, {2, -2}))
               .run();
  expect_tensor<float>(y[0], {2}, {0.5f, -0.5f});
}

TEST(BitShift, ShiftsPastTheWidthGiveZero) {
  // np.left_shift(np.array([1, 255], np.uint8), np.array([8, 1], np.uint8))
  auto y = OpTester("BitShift", 11)
               .input(tensor<uint8_t>({2}, {1, 255}))
               .input(tensor<uint8_t>({2}, {8, 1}))
               .attr("direction", std::string("LEFT"))
               .run();
  expect_tensor<uint8_t>(y[0], {2}, {0, 254});
  // np.right_shift(np.array([2**63, 12], np.uint64), np.array([64, 2], np.uint64))
  y = OpTester("BitShift", 11)
          .input(tensor<uint64_t>({2}, {uint64_t{1} << 63, 12}))
          .input(tensor<uint64_t>({2}, {64, 2}))
          .attr("direction", std::string("RIGHT"))
          .run();
  expect_tensor<uint64_t>(y[0], {2}, {0, 3});
}

TEST(BitShift, BadDirectionIsAnError) {
  expect_error(OpTester("BitShift", 11)
                   .input(tensor<uint8_t>({1}, {1}))
                   .input(tensor<uint8_t>({1}, {1}))
                   .attr("direction", std::string("UP")),
               ErrorCode::kInvalidModel, "direction");
}

TEST(Pow, IntegerPowersWrap) {
  // np.power(np.array([2, 3, -2], np.int32), np.array([31, 2, 3], np.int32))
  auto y = OpTester("Pow", 15)
               .input(tensor<int32_t>({3}, {2, 3, -2}))
               .input(tensor<int32_t>({3}, {31, 2, 3}))
               .run();
  expect_tensor<int32_t>(y[0], {3}, {std::numeric_limits<int32_t>::min(), 9, -8});
}

TEST(Pow, NegativeIntegerExponentTruncates) {
  // int(np.float64(2) ** -1), int(np.float64(-1) ** -3)
  auto y = OpTester("Pow", 15)
               .input(tensor<int64_t>({2}, {2, -1}))
               .input(tensor<int64_t>({2}, {-1, -3}))
               .run();
  expect_tensor<int64_t>(y[0], {2}, {0, -1});
  expect_error(
      OpTester("Pow", 15).input(tensor<int64_t>({1}, {0})).input(tensor<int64_t>({1}, {-1})),
      ErrorCode::kInvalidArgument, "negative power");
}

TEST(Pow, MixedDtypes) {
  // np.power(np.array([2, 0.5], np.float32), np.array([3, -2], np.int64)).astype(np.float32)
  auto y = OpTester("Pow", 15)
               .input(tensor<float>({2}, {2, 0.5f}))
               .input(tensor<int64_t>({2}, {3, -2}))
               .run();
  expect_tensor<float>(y[0], {2}, {8, 4});
  // (np.array([2, 3], np.int32) ** np.array([0.5, 2], np.float32)).astype(np.int32)
  y = OpTester("Pow", 15)
          .input(tensor<int32_t>({2}, {2, 3}))
          .input(tensor<float>({2}, {0.5f, 2}))
          .run();
  expect_tensor<int32_t>(y[0], {2}, {1, 9});
}

TEST(Comparison, NaNComparesFalse) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // np.equal(np.array([nan, 1], np.float32), np.array([nan, 1], np.float32))
  auto y = OpTester("Equal", 13)
               .input(tensor<float>({2}, {nan, 1}))
               .input(tensor<float>({2}, {nan, 1}))
               .run();
  expect_tensor<bool>(y[0], {2}, {false, true});
  // np.less_equal(np.float32(1), np.array([nan, 2], np.float32))
  y = OpTester("LessOrEqual", 16)
          .input(tensor<float>({}, {1}))
          .input(tensor<float>({2}, {nan, 2}))
          .run();
  expect_tensor<bool>(y[0], {2}, {false, true});
}

TEST(PRelu, Opset6SlopeIsPerChannel) {
  // np.where(x < 0, x * s[None, :, None], x) with s = [0.1, 0.2, 0.3]
  auto y = OpTester("PRelu", 6)
               .input(tensor<float>({2, 3, 2}, {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12}))
               .input(tensor<float>({3}, {0.1f, 0.2f, 0.3f}))
               .run();
  expect_tensor<float>(y[0], {2, 3, 2},
                       {-0.1f, 2, -0.6f, 4, -1.5f, 6, -0.7f, 8, -1.8f, 10, -3.3f, 12});
}

TEST(PRelu, Opset9SlopeBroadcastsNumpyStyle) {
  // np.where(x < 0, x * s, x) with s = [0.5, 0.25] aligned with the last axis
  auto y = OpTester("PRelu", 9)
               .input(tensor<float>({2, 3, 2}, {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12}))
               .input(tensor<float>({2}, {0.5f, 0.25f}))
               .run();
  expect_tensor<float>(y[0], {2, 3, 2},
                       {-0.5f, 2, -1.5f, 4, -2.5f, 6, -3.5f, 8, -4.5f, 10, -5.5f, 12});
  // A [3] slope does not broadcast to [2,3,2] from opset 7.
  expect_error(OpTester("PRelu", 9)
                   .input(tensor<float>({2, 3, 2}, std::vector<float>(12, -1)))
                   .input(tensor<float>({3}, {0.1f, 0.2f, 0.3f})),
               ErrorCode::kInvalidArgument, "does not broadcast");
}

TEST(Where, BroadcastsAllThree) {
  // np.where(np.array([[True], [False]]), np.array([[1, 2, 3]]), np.int64(-1))
  auto y = OpTester("Where", 16)
               .input(tensor<bool>({2, 1}, {true, false}))
               .input(tensor<int64_t>({1, 3}, {1, 2, 3}))
               .input(tensor<int64_t>({}, {-1}))
               .run();
  expect_tensor<int64_t>(y[0], {2, 3}, {1, 2, 3, -1, -1, -1});
}

TEST(Binary, StaticShapeIsInferred) {
  auto s = OpTester("Greater", 13)
               .input(tensor<float>({2, 1}, {1, 2}))
               .input(tensor<float>({3}, {1, 2, 3}))
               .session();
  ASSERT_TRUE(s.outputs()[0].shape.has_value());
  EXPECT_EQ(s.outputs()[0].dtype, DType::kBool);
  EXPECT_EQ(s.outputs()[0].shape_string(), "[2,3]");
}

}  // namespace
}  // namespace recur::test

namespace recur::test {
namespace {

// Pow with one exponent of 2 or 0.5 takes the x * x and sqrt path; its values must stay the
// correctly rounded ones: numpy's square and sqrt (numpy 1.24's float32 power is not correctly
// rounded, so it is not the oracle here), and math.pow's at -0 and -inf.
TEST(Pow, SquareOfFloat32MatchesNumpy) {
  const float inf = std::numeric_limits<float>::infinity();
  // np.square(np.array([1.5, -2.25, 3.1, 7e19, 0.3, -0.0], np.float32))
  const std::vector<float> want = {2.25f, 5.0625f, 9.609999656677246f, inf, 0.09000000357627869f,
                                   0.0f};
  for (bool constant_exponent : {true, false}) {
    OpTester t("Pow", 15);
    t.input(tensor<float>({6}, {1.5f, -2.25f, 3.1f, 7e19f, 0.3f, -0.0f}));
    if (constant_exponent) {
      t.constant(tensor<float>({}, {2.0f}));
    } else {
      t.input(tensor<float>({}, {2.0f}));
    }
    expect_tensor<float>(t.run()[0], {6}, want, 0.0);
  }
  // An int64 exponent 2 is the same square.
  auto y = OpTester("Pow", 15)
               .input(tensor<float>({2}, {1.5f, 3.1f}))
               .constant(tensor<int64_t>({1}, {2}))
               .run();
  expect_tensor<float>(y[0], {2}, {2.25f, 9.609999656677246f}, 0.0);
}

TEST(Pow, SquareRootOfFloat32MatchesNumpy) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // np.sqrt(np.array([2, 0.3, 1e-30, 7.7, 3e38], np.float32)); then math.pow(v, 0.5) for
  // 0, -0, -inf and inf (+0, +0, inf, inf), and NaN for -4.
  auto y = OpTester("Pow", 15)
               .input(tensor<float>({10}, {2, 0.3f, 1e-30f, 7.7f, 3e38f, 0, -0.0f, -inf, inf, -4}))
               .constant(tensor<float>({}, {0.5f}))
               .run();
  const std::vector<float> want = {1.4142135381698608f,
                                   0.547722578048706f,
                                   1.0000000036274937e-15f,
                                   2.7748873233795166f,
                                   1.7320507716308828e+19f,
                                   0,
                                   0,
                                   inf,
                                   inf,
                                   nan};
  expect_tensor<float>(y[0], {10}, want, 0.0);
  EXPECT_FALSE(std::signbit(y[0].data<float>()[6])) << "pow(-0, 0.5) is +0";
}

TEST(Pow, Float64FastPathsMatchNumpy) {
  // np.square(np.array([1.1, -3.7, 2.5e100])); math.pow(v, 0.5) for 2, 0.3, 7.7
  auto y = OpTester("Pow", 15)
               .input(tensor<double>({3}, {1.1, -3.7, 2.5e100}))
               .constant(tensor<double>({}, {2.0}))
               .run();
  expect_tensor<double>(y[0], {3}, {1.2100000000000002, 13.690000000000001, 6.25e+200}, 0.0);
  y = OpTester("Pow", 15)
          .input(tensor<double>({3}, {2.0, 0.3, 7.7}))
          .constant(tensor<double>({}, {0.5}))
          .run();
  expect_tensor<double>(y[0], {3}, {1.4142135623730951, 0.5477225575051661, 2.7748873851023217},
                        0.0);
}

TEST(Pow, OtherExponentsKeepTheGeneralPath) {
  // np.float32(np.float64(v) ** 3) for v in np.array([1.5, -2.25, 3.1, 0.3], np.float32): the
  // general path computes in double and rounds once
  auto y = OpTester("Pow", 15)
               .input(tensor<float>({4}, {1.5f, -2.25f, 3.1f, 0.3f}))
               .constant(tensor<float>({}, {3.0f}))
               .run();
  expect_tensor<float>(y[0], {4}, {3.375f, -11.390625f, 29.790996551513672f, 0.027000002562999725f},
                       0.0);
  // np.float32(np.float64(v) ** 1.5) for v in np.array([2, 0.3, 7.7], np.float32)
  y = OpTester("Pow", 15)
          .input(tensor<float>({3}, {2, 0.3f, 7.7f}))
          .constant(tensor<float>({}, {1.5f}))
          .run();
  expect_tensor<float>(y[0], {3}, {2.8284270763397217f, 0.16431677341461182f, 21.36663246154785f},
                       0.0);
  // A per-element exponent of 2 and 0.5 (not one number): np.power([3, 4], [2, 0.5])
  y = OpTester("Pow", 15)
          .input(tensor<float>({2}, {3, 4}))
          .input(tensor<float>({2}, {2, 0.5f}))
          .run();
  expect_tensor<float>(y[0], {2}, {9, 2}, 0.0);
}

}  // namespace
}  // namespace recur::test
