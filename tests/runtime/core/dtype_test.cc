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

}  // namespace
}  // namespace recur
