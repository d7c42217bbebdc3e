#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "recur/dtype.h"

namespace recur {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
      return 4;
    case DType::kUInt8:
      return 1;
    case DType::kInt8:
      return 1;
    case DType::kUInt16:
      return 2;
    case DType::kInt16:
      return 2;
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kBool:
      return 1;
    case DType::kFloat16:
      return 2;
    case DType::kFloat64:
      return 8;
    case DType::kUInt32:
      return 4;
    case DType::kUInt64:
      return 8;
    case DType::kBFloat16:
      return 2;
    case DType::kString:
      return sizeof(std::string);
    case DType::kSequence:
    case DType::kNone:
    case DType::kUndefined:
      return 0;
  }
  return 0;
}

namespace {
struct NamedType {
  DType type;
  std::string_view name;
};
constexpr NamedType kNames[] = {
    {DType::kFloat32, "float32"}, {DType::kUInt8, "uint8"},       {DType::kInt8, "int8"},
    {DType::kUInt16, "uint16"},   {DType::kInt16, "int16"},       {DType::kInt32, "int32"},
    {DType::kInt64, "int64"},     {DType::kString, "string"},     {DType::kBool, "bool"},
    {DType::kFloat16, "float16"}, {DType::kFloat64, "float64"},   {DType::kUInt32, "uint32"},
    {DType::kUInt64, "uint64"},   {DType::kBFloat16, "bfloat16"}, {DType::kSequence, "sequence"},
    {DType::kNone, "none"},
};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& n : kNames)
    if (n.type == t) return n.name;
  return "undefined";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& n : kNames)
    if (n.name == name) return n.type;
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  return std::nullopt;
}

bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

bool is_integer(DType t) {
  switch (t) {
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt32:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}

bool is_signed(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 ||
         is_floating(t);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3FFu) << 13;
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7FFFFFFFu;
  if (absx >= 0x7F800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7C00u | (absx > 0x7F800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow to inf
  if (absx < 0x38800000u) {  // result is subnormal or zero
    // Shift the float (with hidden bit) into half subnormal position, rounding to nearest even.
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7FFFFFu) | 0x800000u;
    // value = m * 2^(e-150) and the half subnormal unit is 2^-24, so q = m >> (126 - e).
    const uint32_t s = 126 - e;
    uint32_t q = m >> s;
    const uint32_t rem = m & ((1u << s) - 1);
    const uint32_t half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias exponent and round mantissa to 10 bits.
  uint32_t h = ((absx - 0x38000000u) >> 13);
  const uint32_t rem = absx & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

Float16::Float16(float f) : bits(float_to_half(f)) {}
Float16::operator float() const { return half_to_float(bits); }

BFloat16::BFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
    bits = static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  } else {
    const uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
    bits = static_cast<uint16_t>((x + rounding) >> 16);
  }
}
BFloat16::operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

}  // namespace recur
