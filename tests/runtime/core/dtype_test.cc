#include "recur/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace recur {
namespace {

TEST(DType, SizesMatchTheStorageTypes) {
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kFloat64), 8u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kInt8), 1u);
  EXPECT_EQ(dtype_size(DType::kUInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kBool), 1u);
  EXPECT_EQ(dtype_size(DType::kString), sizeof(std::string));
  EXPECT_EQ(dtype_size(DType::kUndefined), 0u);
  EXPECT_EQ(dtype_size(DType::kSequence), 0u);
}

TEST(DType, NamesRoundTrip) {
  EXPECT_EQ(dtype_name(DType::kFloat32), "float32");
  EXPECT_EQ(dtype_name(DType::kInt64), "int64");
  for (DType t : {DType::kFloat32, DType::kUInt8, DType::kInt16, DType::kBool, DType::kFloat16,
                  DType::kBFloat16, DType::kUInt32}) {
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t) << dtype_name(t);
  }
  EXPECT_FALSE(dtype_from_name("float31").has_value());
}

TEST(DType, Classification) {
  EXPECT_TRUE(is_floating(DType::kBFloat16));
  EXPECT_FALSE(is_floating(DType::kInt32));
  EXPECT_TRUE(is_integer(DType::kUInt8));
  EXPECT_FALSE(is_integer(DType::kBool));
  EXPECT_TRUE(is_signed(DType::kInt8));
  EXPECT_FALSE(is_signed(DType::kUInt16));
}

TEST(Float16, KnownBitPatterns) {
  // IEEE 754 binary16: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 (the largest finite) = 0x7BFF.
  EXPECT_EQ(Float16(1.0f).bits, 0x3C00);
  EXPECT_EQ(Float16(-2.0f).bits, 0xC000);
  EXPECT_EQ(Float16(65504.0f).bits, 0x7BFF);
  EXPECT_EQ(static_cast<float>(Float16::from_bits(0x3555)), 0.333251953125f);
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even gives 1.
  EXPECT_EQ(Float16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3C00);
  EXPECT_TRUE(std::isinf(static_cast<float>(Float16(1e6f))));
}

TEST(BFloat16, KnownBitPatterns) {
  // The upper 16 bits of the float32: 1.0f = 0x3F800000.
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16(-3.0f).bits, 0xC040);
  EXPECT_EQ(static_cast<float>(BFloat16::from_bits(0x4049)), 3.140625f);
}

TEST(Float8, KnownBitPatterns) {
  // E4M3FN: bias 7, 3 mantissa bits, no infinities, NaN = S.1111.111, max 448 = 0x7E.
  EXPECT_EQ(Float8E4M3FN(1.0f).bits, 0x38);
  EXPECT_EQ(Float8E4M3FN(-448.0f).bits, 0xFE);
  EXPECT_EQ(Float8E4M3FN(std::ldexp(1.0f, -9)).bits, 0x01);  // smallest subnormal
  // 464 is halfway between 448 and the (NaN) next code: ties to even keeps 448.
  EXPECT_EQ(Float8E4M3FN(464.0f).bits, 0x7E);
  EXPECT_EQ(Float8E4M3FN(1000.0f).bits, 0x7E);
  EXPECT_EQ(Float8E4M3FN(1000.0f, /*saturate=*/false).bits, 0x7F);
  EXPECT_EQ(Float8E4M3FN(std::numeric_limits<float>::infinity()).bits, 0x7E);
  EXPECT_TRUE(std::isnan(static_cast<float>(Float8E4M3FN::from_bits(0xFF))));
  EXPECT_EQ(static_cast<float>(Float8E4M3FN::from_bits(0x7E)), 448.0f);
  // 1.0625 is halfway between 1 (0x38) and 1.125 (0x39): ties to even gives 1.
  EXPECT_EQ(Float8E4M3FN(1.0625f).bits, 0x38);
  EXPECT_EQ(Float8E4M3FN(1.0626f).bits, 0x39);

  // E4M3FNUZ: bias 8, no -0 (0x80 is NaN), max 240 = 0x7F.
  EXPECT_EQ(Float8E4M3FNUZ(1.0f).bits, 0x40);
  EXPECT_EQ(Float8E4M3FNUZ(-0.0f).bits, 0x00);
  EXPECT_EQ(Float8E4M3FNUZ(-1e-7f).bits, 0x00);
  EXPECT_EQ(Float8E4M3FNUZ(1e6f).bits, 0x7F);
  EXPECT_EQ(Float8E4M3FNUZ(1e6f, false).bits, 0x80);
  EXPECT_TRUE(std::isnan(static_cast<float>(Float8E4M3FNUZ::from_bits(0x80))));

  // E5M2: IEEE-like, bias 15, max 57344 = 0x7B, Inf = 0x7C.
  EXPECT_EQ(Float8E5M2(1.0f).bits, 0x3C);
  EXPECT_EQ(Float8E5M2(1e6f).bits, 0x7B);
  EXPECT_EQ(Float8E5M2(-1e6f, false).bits, 0xFC);
  EXPECT_TRUE(std::isinf(static_cast<float>(Float8E5M2::from_bits(0x7C))));
  EXPECT_EQ(static_cast<float>(Float8E5M2::from_bits(0x01)), std::ldexp(1.0f, -16));

  // E5M2FNUZ: bias 16, max 57344 = 0x7F, NaN = 0x80.
  EXPECT_EQ(Float8E5M2FNUZ(1.0f).bits, 0x40);
  EXPECT_EQ(static_cast<float>(Float8E5M2FNUZ::from_bits(0x7F)), 57344.0f);
  EXPECT_EQ(Float8E5M2FNUZ(std::numeric_limits<float>::quiet_NaN()).bits, 0x80);
}

TEST(DType, NewTypeCodes) {
  EXPECT_EQ(static_cast<int>(DType::kFloat8E4M3FN), 17);
  EXPECT_EQ(static_cast<int>(DType::kInt4), 22);
  EXPECT_EQ(dtype_size(DType::kUInt4), 1u);  // held unpacked
  EXPECT_EQ(dtype_from_name("float8e5m2fnuz"), DType::kFloat8E5M2FNUZ);
  EXPECT_TRUE(is_float8(DType::kFloat8E5M2));
  EXPECT_TRUE(is_signed(DType::kInt4));
  EXPECT_FALSE(is_signed(DType::kUInt4));
}

TEST(DType, IrVersion11To13Types) {
  EXPECT_EQ(static_cast<int>(DType::kFloat4E2M1), 23);
  EXPECT_EQ(static_cast<int>(DType::kFloat8E8M0), 24);
  EXPECT_EQ(static_cast<int>(DType::kUInt2), 25);
  EXPECT_EQ(static_cast<int>(DType::kInt2), 26);
  EXPECT_EQ(dtype_name(DType::kFloat4E2M1), "float4e2m1");
  EXPECT_EQ(dtype_name(DType::kFloat8E8M0), "float8e8m0");
  EXPECT_EQ(dtype_name(DType::kUInt2), "uint2");
  EXPECT_EQ(dtype_name(DType::kInt2), "int2");
  for (DType t : {DType::kFloat4E2M1, DType::kFloat8E8M0, DType::kUInt2, DType::kInt2}) {
    EXPECT_EQ(dtype_from_name(dtype_name(t)), t) << dtype_name(t);
    EXPECT_EQ(dtype_size(t), 1u) << dtype_name(t);  // held one byte per element
  }
  EXPECT_EQ(dtype_bits(DType::kFloat4E2M1), 4u);
  EXPECT_EQ(dtype_bits(DType::kInt4), 4u);
  EXPECT_EQ(dtype_bits(DType::kInt2), 2u);
  EXPECT_EQ(dtype_bits(DType::kUInt2), 2u);
  EXPECT_EQ(dtype_bits(DType::kFloat8E8M0), 8u);
  EXPECT_EQ(dtype_bits(DType::kFloat32), 32u);
  EXPECT_TRUE(is_float8(DType::kFloat8E8M0));
  EXPECT_FALSE(is_float8(DType::kFloat4E2M1));
  EXPECT_TRUE(is_float4(DType::kFloat4E2M1));
  EXPECT_FALSE(is_floating(DType::kFloat4E2M1));
  EXPECT_TRUE(is_integer(DType::kInt2));
  EXPECT_TRUE(is_integer(DType::kUInt2));
  EXPECT_TRUE(is_signed(DType::kInt2));
  EXPECT_FALSE(is_signed(DType::kUInt2));
  EXPECT_TRUE(is_signed(DType::kFloat4E2M1));
  EXPECT_FALSE(is_signed(DType::kFloat8E8M0));  // an exponent only
}

TEST(Float4E2M1, EveryCodeDecodes) {
  const float want[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (uint8_t c = 0; c < 16; ++c) {
    EXPECT_EQ(float4e2m1_to_float(c), want[c]) << int(c);
    EXPECT_EQ(std::signbit(float4e2m1_to_float(c)), c >= 8) << int(c);
    EXPECT_EQ(float_to_float4e2m1(want[c]), c) << int(c);  // exact values round-trip
  }
}

TEST(Float4E2M1, RoundsToNearestEvenAndSaturates) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Ties: 0.25 (0 | 0.5) -> 0; 0.75 (0.5 | 1) -> 1; 1.25 -> 1; 1.75 -> 2; 2.5 -> 2; 3.5 -> 4;
  // 5 (4 | 6) -> 4. Otherwise the nearer: 0.3 -> 0.5, 5.5 -> 6, 0.24 -> 0. NaN -> -0 (ONNX 1.20's
  // test data).
  const struct {
    float x;
    uint8_t code;
  } cases[] = {{0.25f, 0x0}, {0.75f, 0x2}, {1.25f, 0x2}, {1.75f, 0x4}, {2.5f, 0x4},
               {3.5f, 0x6},  {5.0f, 0x6},  {0.3f, 0x1},  {5.5f, 0x7},  {0.24f, 0x0},
               {-3.5f, 0xE}, {7.0f, 0x7},  {1e6f, 0x7},  {-8.0f, 0xF}, {inf, 0x7},
               {-inf, 0xF},  {nan, 0x8},   {-0.0f, 0x8}, {1e-7f, 0x0}, {-0.01f, 0x8}};
  for (const auto& c : cases) EXPECT_EQ(float_to_float4e2m1(c.x), c.code) << c.x;
  EXPECT_EQ(Float4E2M1(2.9f).bits, 0x5);
  EXPECT_EQ(static_cast<float>(Float4E2M1::from_bits(0xD)), -3.0f);
}

TEST(Float8E8M0, Decodes) {
  EXPECT_EQ(float8_to_float(0x7F, DType::kFloat8E8M0), 1.0f);
  EXPECT_EQ(float8_to_float(0x80, DType::kFloat8E8M0), 2.0f);
  EXPECT_EQ(float8_to_float(0x7C, DType::kFloat8E8M0), 0.125f);
  EXPECT_EQ(float8_to_float(0x00, DType::kFloat8E8M0), std::ldexp(1.0f, -127));
  EXPECT_EQ(float8_to_float(0xFE, DType::kFloat8E8M0), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(float8_to_float(0xFF, DType::kFloat8E8M0)));
  EXPECT_EQ(static_cast<float>(Float8E8M0::from_bits(0x81)), 4.0f);
}

TEST(Float8E8M0, RoundModes) {
  const auto up = E8M0Round::kUp, down = E8M0Round::kDown, near = E8M0Round::kNearest;
  // 3 = 1.5 * 2^1: up 4, down 2, nearest a tie, which goes up. 2.9 = 1.45 * 2: nearest 2.
  EXPECT_EQ(float_to_float8e8m0(3.0f, true, up), 0x81);
  EXPECT_EQ(float_to_float8e8m0(3.0f, true, down), 0x80);
  EXPECT_EQ(float_to_float8e8m0(3.0f, true, near), 0x81);
  EXPECT_EQ(float_to_float8e8m0(2.9f, true, near), 0x80);
  EXPECT_EQ(float_to_float8e8m0(2.9f, true, up), 0x81);
  // Powers of two are exact in every mode; the sign is ignored.
  for (auto m : {up, down, near}) {
    EXPECT_EQ(float_to_float8e8m0(1.0f, true, m), 0x7F);
    EXPECT_EQ(float_to_float8e8m0(-2.0f, true, m), 0x80);
    EXPECT_EQ(float_to_float8e8m0(std::ldexp(1.0f, -127), true, m), 0x00);  // a subnormal
  }
  // 0.124 = 1.984 * 2^-4 -> 2^-3 rounding up or to nearest, 2^-4 down.
  EXPECT_EQ(float_to_float8e8m0(0.124f, true, up), 0x7C);
  EXPECT_EQ(float_to_float8e8m0(0.124f, true, near), 0x7C);
  EXPECT_EQ(float_to_float8e8m0(0.124f, true, down), 0x7B);
  // Between 2^-127 and 2^-126 (float32 subnormals): 1.5 * 2^-127 ties up to nearest.
  const float s = std::ldexp(1.5f, -127);
  EXPECT_EQ(float_to_float8e8m0(s, true, up), 0x01);
  EXPECT_EQ(float_to_float8e8m0(s, true, down), 0x00);
  EXPECT_EQ(float_to_float8e8m0(s, true, near), 0x01);
  // The default of float_to_float8 is up.
  EXPECT_EQ(float_to_float8(1.1f, DType::kFloat8E8M0), 0x80);
}

TEST(Float8E8M0, SpecialsAndSaturation) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float big = std::ldexp(1.5f, 127);  // rounds up past 2^127
  EXPECT_EQ(float_to_float8e8m0(big, true, E8M0Round::kUp), 0xFE);
  EXPECT_EQ(float_to_float8e8m0(big, false, E8M0Round::kUp), 0xFF);
  EXPECT_EQ(float_to_float8e8m0(big, false, E8M0Round::kDown), 0xFE);
  EXPECT_EQ(float_to_float8e8m0(inf, true, E8M0Round::kUp), 0xFE);
  EXPECT_EQ(float_to_float8e8m0(inf, false, E8M0Round::kNearest), 0xFF);
  EXPECT_EQ(float_to_float8e8m0(nan, true, E8M0Round::kUp), 0xFF);
  // 0 and what lies below 2^-127: the smallest code saturating, NaN not.
  EXPECT_EQ(float_to_float8e8m0(0.0f, true, E8M0Round::kUp), 0x00);
  EXPECT_EQ(float_to_float8e8m0(0.0f, false, E8M0Round::kNearest), 0xFF);
  EXPECT_EQ(float_to_float8e8m0(std::ldexp(1.0f, -130), false, E8M0Round::kDown), 0xFF);
  EXPECT_EQ(float_to_float8e8m0(std::ldexp(1.0f, -130), false, E8M0Round::kUp), 0x00);
}

}  // namespace
}  // namespace recur
