#include "recur/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace recur
