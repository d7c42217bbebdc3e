// Cast and CastLike: conversions with a defined result for out-of-range values, a single
// rounding from double to float16, opset 1's type names. Expected values are numpy's, or
// torch's for bfloat16 (expressions in the comments).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

int64_t to(DType t) { return static_cast<int64_t>(t); }

TEST(Cast, FloatToSmallIntegersWrapsAfterTruncation) {
  // np.array([300.0, -1.5, 2.7, -129.0], np.float32).astype(np.int8)
  auto y = OpTester("Cast", 13)
               .input(tensor<float>({4}, {300, -1.5f, 2.7f, -129}))
               .attr("to", to(DType::kInt8))
               .run();
  expect_tensor<int8_t>(y[0], {4}, {44, -1, 2, 127});
  // np.array([-1.0, 255.9, 256.0], np.float32).astype(np.uint8)
  y = OpTester("Cast", 13)
          .input(tensor<float>({3}, {-1, 255.9f, 256}))
          .attr("to", to(DType::kUInt8))
          .run();
  expect_tensor<uint8_t>(y[0], {3}, {255, 255, 0});
}

TEST(Cast, NaNAndInfinityToIntegersAreDefined) {
  // numpy leaves these to the platform; recur defines NaN -> 0 and saturates beyond int64.
  auto y = OpTester("Cast", 13)
               .input(tensor<float>({3}, {kNaNf, kInff, -kInff}))
               .attr("to", to(DType::kInt32))
               .run();
  expect_tensor<int32_t>(
      y[0], {3}, {0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()});
}

TEST(Cast, ToBool) {
  // np.array([0, -0.0, nan, 0.5, inf], np.float32).astype(bool)
  auto y = OpTester("Cast", 13)
               .input(tensor<float>({5}, {0, -0.0f, kNaNf, 0.5f, kInff}))
               .attr("to", to(DType::kBool))
               .run();
  expect_tensor<bool>(y[0], {5}, {false, false, true, true, true});
}

TEST(Cast, DoubleToFloat16RoundsOnce) {
  // np.array([1 + 2**-11 + 2**-30, 1 + 2**-11, 65520.0, 1e-8]).astype(np.float16).view(np.uint16)
  auto y = OpTester("Cast", 13)
               .input(tensor<double>({4}, {1 + 0x1p-11 + 0x1p-30, 1 + 0x1p-11, 65520.0, 1e-8}))
               .attr("to", to(DType::kFloat16))
               .run();
  ASSERT_EQ(y[0].dtype(), DType::kFloat16);
  const Float16* p = y[0].data<Float16>();
  EXPECT_EQ(p[0].bits, 15361);
  EXPECT_EQ(p[1].bits, 15360);
  EXPECT_EQ(p[2].bits, 31744);
  EXPECT_EQ(p[3].bits, 0);
}

TEST(Cast, IntegersToFloat16AndBack) {
  // np.array([2049, -70000, 3], np.int64).astype(np.float16)
  auto y = OpTester("Cast", 13)
               .input(tensor<int64_t>({3}, {2049, -70000, 3}))
               .attr("to", to(DType::kFloat16))
               .run();
  expect_tensor<Float16>(y[0], {3}, {Float16(2048.0f), Float16(-kInff), Float16(3.0f)});
  // np.array([1.5, -2.75, 65504], np.float16).astype(np.int32)
  y = OpTester("Cast", 13)
          .input(tensor<Float16>({3}, {Float16(1.5f), Float16(-2.75f), Float16(65504.0f)}))
          .attr("to", to(DType::kInt32))
          .run();
  expect_tensor<int32_t>(y[0], {3}, {1, -2, 65504});
}

TEST(Cast, IntegerNarrowingWraps) {
  // np.array([-1, 256, 511], np.int32).astype(np.uint8)
  auto y = OpTester("Cast", 13)
               .input(tensor<int32_t>({3}, {-1, 256, 511}))
               .attr("to", to(DType::kUInt8))
               .run();
  expect_tensor<uint8_t>(y[0], {3}, {255, 0, 255});
}

TEST(Cast, FloatToBFloat16RoundsToNearestEven) {
  // torch.tensor([0.47892547, 0.48033667, 1 + 2**-8 + 2**-9, 3.4e38]).to(torch.bfloat16)
  //   .view(torch.int16)
  auto y =
      OpTester("Cast", 13)
          .input(tensor<float>({4}, {0.47892547f, 0.48033667f, 1 + 0x1p-8f + 0x1p-9f, 3.4e38f}))
          .attr("to", to(DType::kBFloat16))
          .run();
  ASSERT_EQ(y[0].dtype(), DType::kBFloat16);
  const BFloat16* p = y[0].data<BFloat16>();
  EXPECT_EQ(p[0].bits, 16117);
  EXPECT_EQ(p[1].bits, 16118);
  EXPECT_EQ(p[2].bits, 16257);
  EXPECT_EQ(p[3].bits, 32640);
}

TEST(Cast, Opset1TakesATypeName) {
  // np.array([True, False]).astype(np.float32)
  auto y = OpTester("Cast", 1)
               .input(tensor<bool>({2}, {true, false}))
               .attr("to", std::string("FLOAT"))
               .run();
  expect_tensor<float>(y[0], {2}, {1, 0});
  expect_error(OpTester("Cast", 1).input(tensor<bool>({1}, {true})).attr("to", std::string("REAL")),
               ErrorCode::kInvalidModel, "REAL");
}

Tensor strings(Shape shape, std::vector<std::string> values) {
  return Tensor::from_vector<std::string>(std::move(shape), values);
}

std::vector<std::string> string_values(const Tensor& t) {
  const std::string* p = t.data<std::string>();
  return {p, p + t.numel()};
}

TEST(Cast, NumbersToStringsAreNumpysShortestText) {
  // [str(v) for v in np.array([0.1, 1e20, -2.5, 16777216, np.nan, -np.inf], np.float32)]
  auto y = OpTester("Cast", 13)
               .input(tensor<float>({6}, {0.1f, 1e20f, -2.5f, 16777216.0f, static_cast<float>(kNaN),
                                          -static_cast<float>(kInf)}))
               .attr("to", to(DType::kString))
               .run();
  EXPECT_EQ(y[0].shape(), (Shape{6}));
  EXPECT_EQ(string_values(y[0]),
            (std::vector<std::string>{"0.1", "1e+20", "-2.5", "16777216", "nan", "-inf"}));
  // str(np.float64(0.1)), str(np.int64(-9223372036854775808)), str(np.uint8(255))
  EXPECT_EQ(string_values(OpTester("Cast", 13)
                              .input(tensor<double>({1}, {0.1}))
                              .attr("to", to(DType::kString))
                              .run()[0]),
            (std::vector<std::string>{"0.1"}));
  EXPECT_EQ(string_values(OpTester("Cast", 13)
                              .input(tensor<int64_t>({1}, {std::numeric_limits<int64_t>::min()}))
                              .attr("to", to(DType::kString))
                              .run()[0]),
            (std::vector<std::string>{"-9223372036854775808"}));
  EXPECT_EQ(string_values(OpTester("Cast", 13)
                              .input(tensor<uint8_t>({1}, {255}))
                              .attr("to", to(DType::kString))
                              .run()[0]),
            (std::vector<std::string>{"255"}));
}

TEST(Cast, StringsToNumbers) {
  // np.array(["+1.5", "-INF", "nan", "1e400", "1e-400", "7"]).astype(np.float64)
  auto y = OpTester("Cast", 13)
               .input(strings({6}, {"+1.5", "-INF", "nan", "1e400", "1e-400", "7"}))
               .attr("to", to(DType::kFloat64))
               .run();
  expect_tensor<double>(y[0], {6}, {1.5, -kInf, kNaN, kInf, 0.0, 7.0});
  // np.array(["-12", "9223372036854775807", "2.9"]).astype(np.float64).astype(np.int64) for the
  // last; integers are read exactly, not through a double.
  auto z = OpTester("Cast", 13)
               .input(strings({3}, {"-12", "9223372036854775807", "2.9"}))
               .attr("to", to(DType::kInt64))
               .run();
  expect_tensor<int64_t>(z[0], {3}, {-12, 9223372036854775807, 2});
  // np.float32("0.1") rounds once from the text: 0.1f exactly.
  auto f = OpTester("Cast", 13).input(strings({1}, {"0.1"})).attr("to", to(DType::kFloat32)).run();
  EXPECT_EQ(f[0].data<float>()[0], 0.1f);
}

TEST(Cast, TextThatIsNotANumberIsAnError) {
  for (const char* bad : {"abc", "", "1.5x", " 1"}) {
    expect_error(
        OpTester("Cast", 13).input(strings({2}, {"1", bad})).attr("to", to(DType::kFloat32)),
        ErrorCode::kInvalidArgument, "element 1");
  }
}

TEST(Cast, CastLikeToAndFromStrings) {
  auto y = OpTester("CastLike", 15)
               .input(tensor<int32_t>({2}, {-3, 40}))
               .input(strings({1}, {""}))
               .run();
  EXPECT_EQ(string_values(y[0]), (std::vector<std::string>{"-3", "40"}));
  auto z = OpTester("CastLike", 15)
               .input(strings({2}, {"-3", "40"}))
               .input(tensor<int8_t>({0}, {}))
               .run();
  expect_tensor<int8_t>(z[0], {2}, {-3, 40});
}

TEST(Cast, CastLikeTakesTheSecondInputsDtype) {
  // np.array([1.75, -3.5], np.float64).astype(np.int16)
  auto s = OpTester("CastLike", 15)
               .input(tensor<double>({2}, {1.75, -3.5}))
               .input(tensor<int16_t>({0}, {}))
               .session();
  EXPECT_EQ(s.outputs()[0].dtype, DType::kInt16);
  auto y = OpTester("CastLike", 15)
               .input(tensor<double>({2}, {1.75, -3.5}))
               .input(tensor<int16_t>({0}, {}))
               .run();
  expect_tensor<int16_t>(y[0], {2}, {1, -3});
}

TEST(Cast, ToFloat8SaturatesUnlessTold) {
  // E4M3FN: 1000 is beyond the largest finite value 448; 0.3 rounds to 0.3125 (0x2A).
  OpTester("Cast", 19)
      .input(tensor<float>({3}, {1000, -kInff, 0.3f}))
      .attr("to", to(DType::kFloat8E4M3FN))
      .expect<Float8E4M3FN>({3}, {Float8E4M3FN::from_bits(0x7E), Float8E4M3FN::from_bits(0xFE),
                                  Float8E4M3FN::from_bits(0x2A)})
      .check();
  // saturate=0: out of range becomes NaN (E4M3FN) or infinity (E5M2).
  OpTester("Cast", 19)
      .input(tensor<float>({2}, {1000, -kInff}))
      .attr("to", to(DType::kFloat8E4M3FN))
      .attr("saturate", int64_t{0})
      .expect<Float8E4M3FN>({2}, {Float8E4M3FN::from_bits(0x7F), Float8E4M3FN::from_bits(0xFF)})
      .check();
  OpTester("Cast", 19)
      .input(tensor<float>({2}, {1e6f, -kInff}))
      .attr("to", to(DType::kFloat8E5M2))
      .attr("saturate", int64_t{0})
      .expect<Float8E5M2>({2}, {Float8E5M2::from_bits(0x7C), Float8E5M2::from_bits(0xFC)})
      .check();
}

TEST(Cast, Float8ToFloat) {
  // E5M2FNUZ 0x80 is its only NaN; 0x3E = 1.5 * 2^(15-16) = 0.75.
  OpTester("Cast", 19)
      .input(tensor<Float8E5M2FNUZ>(
          {2}, {Float8E5M2FNUZ::from_bits(0x3E), Float8E5M2FNUZ::from_bits(0x80)}))
      .attr("to", to(DType::kFloat32))
      .expect<float>({2}, {0.75f, kNaNf})
      .check();
}

TEST(Cast, Int4RoundsHalfToEvenAndClamps) {
  // np.clip(np.rint([2.5, -8.6, 100, 3.5, -1]), -8, 7) = [2, -8, 7, 4, -1]
  OpTester("Cast", 21)
      .input(tensor<float>({5}, {2.5f, -8.6f, 100, 3.5f, -1}))
      .attr("to", to(DType::kInt4))
      .expect<Int4>({5}, {Int4{2}, Int4{-8}, Int4{7}, Int4{4}, Int4{-1}})
      .check();
  OpTester("Cast", 21)
      .input(tensor<UInt4>({3}, {UInt4{0}, UInt4{9}, UInt4{15}}))
      .attr("to", to(DType::kFloat32))
      .expect<float>({3}, {0, 9, 15})
      .check();
}

TEST(Cast, ToFloat4E2M1RoundsToNearestEvenAndSaturates) {
  // Ties to the even code (-3.5 -> -4, 0.25 -> 0); beyond +-6 and +-Inf saturate; NaN -> -0
  // (ONNX 1.20's test_cast_FLOAT_to_FLOAT4E2M1).
  OpTester("Cast", 23)
      .input(tensor<float>({14}, {0.48f, 0.25f, 1.05f, -3.5f, -8, 9, 1e6f, 1e-7f, kNaNf, kInff,
                                  -kInff, -4, 0.01f, -0.0f}))
      .attr("to", to(DType::kFloat4E2M1))
      .expect<Float4E2M1>(
          {14}, {Float4E2M1::from_bits(0x1), Float4E2M1::from_bits(0x0), Float4E2M1::from_bits(0x2),
                 Float4E2M1::from_bits(0xE), Float4E2M1::from_bits(0xF), Float4E2M1::from_bits(0x7),
                 Float4E2M1::from_bits(0x7), Float4E2M1::from_bits(0x0), Float4E2M1::from_bits(0x8),
                 Float4E2M1::from_bits(0x7), Float4E2M1::from_bits(0xF), Float4E2M1::from_bits(0xE),
                 Float4E2M1::from_bits(0x0), Float4E2M1::from_bits(0x8)})
      .check();
  OpTester("Cast", 23)
      .input(tensor<Float16>({3}, {Float16(2.5f), Float16(-0.75f), Float16(5.0f)}))
      .attr("to", to(DType::kFloat4E2M1))
      .expect<Float4E2M1>(
          {3}, {Float4E2M1::from_bits(0x4), Float4E2M1::from_bits(0xA), Float4E2M1::from_bits(0x6)})
      .check();
}

TEST(Cast, FromFloat4E2M1) {
  OpTester("Cast", 23)
      .input(tensor<Float4E2M1>(
          {8}, {Float4E2M1::from_bits(0x0), Float4E2M1::from_bits(0x1), Float4E2M1::from_bits(0x3),
                Float4E2M1::from_bits(0x5), Float4E2M1::from_bits(0x7), Float4E2M1::from_bits(0x8),
                Float4E2M1::from_bits(0xB), Float4E2M1::from_bits(0xF)}))
      .attr("to", to(DType::kFloat32))
      .expect<float>({8}, {0, 0.5f, 1.5f, 3, 6, -0.0f, -1.5f, -6})
      .check();
  // To float8e4m3fn exactly: 6 = 0x4C, -1.5 = 0xBC.
  OpTester("Cast", 23)
      .input(tensor<Float4E2M1>({2}, {Float4E2M1::from_bits(0x7), Float4E2M1::from_bits(0xB)}))
      .attr("to", to(DType::kFloat8E4M3FN))
      .expect<Float8E4M3FN>({2}, {Float8E4M3FN::from_bits(0x4C), Float8E4M3FN::from_bits(0xBC)})
      .check();
}

TEST(Cast, ToFloat8E8M0WithRoundMode) {
  // 3 = 1.5 * 2: up 4, down 2, nearest a tie that goes up; 2.9: nearest 2; 0.124 ~ 1.98 * 2^-4.
  const auto x = tensor<float>({5}, {1, 3, 2.9f, 0.124f, 1.1f});
  OpTester("Cast", 24)
      .input(x)
      .attr("to", to(DType::kFloat8E8M0))
      .expect<Float8E8M0>({5}, {Float8E8M0::from_bits(0x7F), Float8E8M0::from_bits(0x81),
                                Float8E8M0::from_bits(0x81), Float8E8M0::from_bits(0x7C),
                                Float8E8M0::from_bits(0x80)})
      .check();
  OpTester("Cast", 24)
      .input(x)
      .attr("to", to(DType::kFloat8E8M0))
      .attr("round_mode", std::string("down"))
      .expect<Float8E8M0>({5}, {Float8E8M0::from_bits(0x7F), Float8E8M0::from_bits(0x80),
                                Float8E8M0::from_bits(0x80), Float8E8M0::from_bits(0x7B),
                                Float8E8M0::from_bits(0x7F)})
      .check();
  OpTester("Cast", 24)
      .input(x)
      .attr("to", to(DType::kFloat8E8M0))
      .attr("round_mode", std::string("nearest"))
      .expect<Float8E8M0>({5}, {Float8E8M0::from_bits(0x7F), Float8E8M0::from_bits(0x81),
                                Float8E8M0::from_bits(0x80), Float8E8M0::from_bits(0x7C),
                                Float8E8M0::from_bits(0x7F)})
      .check();
  // 3e38 rounds up past 2^127: the largest code saturating, NaN not; Inf likewise.
  OpTester("Cast", 24)
      .input(tensor<float>({3}, {3e38f, kInff, kNaNf}))
      .attr("to", to(DType::kFloat8E8M0))
      .expect<Float8E8M0>({3}, {Float8E8M0::from_bits(0xFE), Float8E8M0::from_bits(0xFE),
                                Float8E8M0::from_bits(0xFF)})
      .check();
  OpTester("Cast", 24)
      .input(tensor<float>({3}, {3e38f, kInff, kNaNf}))
      .attr("to", to(DType::kFloat8E8M0))
      .attr("saturate", int64_t{0})
      .expect<Float8E8M0>({3}, {Float8E8M0::from_bits(0xFF), Float8E8M0::from_bits(0xFF),
                                Float8E8M0::from_bits(0xFF)})
      .check();
  expect_error(OpTester("Cast", 24)
                   .input(x)
                   .attr("to", to(DType::kFloat8E8M0))
                   .attr("round_mode", std::string("sideways")),
               ErrorCode::kInvalidModel, "round_mode 'sideways'");
}

TEST(Cast, FromFloat8E8M0) {
  OpTester("Cast", 24)
      .input(tensor<Float8E8M0>({4}, {Float8E8M0::from_bits(0x7C), Float8E8M0::from_bits(0x80),
                                      Float8E8M0::from_bits(0xFE), Float8E8M0::from_bits(0xFF)}))
      .attr("to", to(DType::kFloat32))
      .expect<float>({4}, {0.125f, 2, 1.7014118e38f, kNaNf})
      .check();
}

TEST(Cast, FloatToInt4WrapsFromOpset25AndSaturatesBefore) {
  // Rounded half to even, then the low 4 bits (25) or clamped (21): 15.5 -> 16 -> 0; 9 -> -7.
  const auto x = tensor<float>({10}, {-9, -8, 7, 8, 9, 15.5f, -0.5f, 0.5f, 1.5f, 2.5f});
  OpTester("Cast", 25)
      .input(x)
      .attr("to", to(DType::kInt4))
      .expect<Int4>({10}, {Int4{7}, Int4{-8}, Int4{7}, Int4{-8}, Int4{-7}, Int4{0}, Int4{0},
                           Int4{0}, Int4{2}, Int4{2}})
      .check();
  OpTester("Cast", 25)
      .input(x)
      .attr("to", to(DType::kUInt4))
      .expect<UInt4>({10}, {UInt4{7}, UInt4{8}, UInt4{7}, UInt4{8}, UInt4{9}, UInt4{0}, UInt4{0},
                            UInt4{0}, UInt4{2}, UInt4{2}})
      .check();
  OpTester("Cast", 21)
      .input(x)
      .attr("to", to(DType::kInt4))
      .expect<Int4>({10}, {Int4{-8}, Int4{-8}, Int4{7}, Int4{7}, Int4{7}, Int4{7}, Int4{0}, Int4{0},
                           Int4{2}, Int4{2}})
      .check();
}

TEST(Cast, IntegersToInt4AndInt2DiscardHighBits) {
  // The spec's fixed-point rule, at every opset: 200 = 0xC8 -> int4 -8, int2 0; -9 -> 7, -1.
  OpTester("Cast", 21)
      .input(tensor<int16_t>({3}, {200, -9, 8}))
      .attr("to", to(DType::kInt4))
      .expect<Int4>({3}, {Int4{-8}, Int4{7}, Int4{-8}})
      .check();
  OpTester("Cast", 25)
      .input(tensor<int16_t>({3}, {200, -9, 6}))
      .attr("to", to(DType::kInt2))
      .expect<Int2>({3}, {Int2{0}, Int2{-1}, Int2{-2}})
      .check();
}

TEST(Cast, FloatToInt2AndUInt2Wrap) {
  const auto x = tensor<float>({7}, {-3, -2, -1, 0, 1, 2, 3});
  OpTester("Cast", 25)
      .input(x)
      .attr("to", to(DType::kInt2))
      .expect<Int2>({7}, {Int2{1}, Int2{-2}, Int2{-1}, Int2{0}, Int2{1}, Int2{-2}, Int2{-1}})
      .check();
  OpTester("Cast", 25)
      .input(x)
      .attr("to", to(DType::kUInt2))
      .expect<UInt2>({7}, {UInt2{1}, UInt2{2}, UInt2{3}, UInt2{0}, UInt2{1}, UInt2{2}, UInt2{3}})
      .check();
  OpTester("Cast", 25)
      .input(tensor<Int2>({4}, {Int2{-2}, Int2{-1}, Int2{0}, Int2{1}}))
      .attr("to", to(DType::kFloat32))
      .expect<float>({4}, {-2, -1, 0, 1})
      .check();
  OpTester("Cast", 25)
      .input(tensor<UInt2>({4}, {UInt2{0}, UInt2{1}, UInt2{2}, UInt2{3}}))
      .attr("to", to(DType::kInt8))
      .expect<int8_t>({4}, {0, 1, 2, 3})
      .check();
}

TEST(Cast, NewTypesToAndFromStrings) {
  OpTester("Cast", 25)
      .input(tensor<std::string>({2}, {"1.5", "-7"}))
      .attr("to", to(DType::kFloat4E2M1))
      .expect<Float4E2M1>({2}, {Float4E2M1::from_bits(0x3), Float4E2M1::from_bits(0xF)})
      .check();
  OpTester("Cast", 25)
      .input(tensor<Int2>({2}, {Int2{-2}, Int2{1}}))
      .attr("to", to(DType::kString))
      .expect<std::string>({2}, {"-2", "1"})
      .check();
  OpTester("Cast", 25)
      .input(tensor<Float8E8M0>({1}, {Float8E8M0::from_bits(0x80)}))
      .attr("to", to(DType::kString))
      .expect<std::string>({1}, {"2"})
      .check();
}

TEST(Cast, CastLikeToFloat4E2M1) {
  OpTester("CastLike", 25)
      .input(tensor<float>({2}, {2.6f, -0.2f}))
      .input(tensor<Float4E2M1>({0}, {}))
      .expect<Float4E2M1>({2}, {Float4E2M1::from_bits(0x5), Float4E2M1::from_bits(0x8)})
      .check();
}

}  // namespace
}  // namespace recur::test
