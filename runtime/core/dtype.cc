#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "recur/dtype.h"
#include "runtime/core/code_layout.h"

namespace recur {

// dtype_size and is_floating: tiny, and run by every initializer a load parses, so they sit in
// the load section (runtime/core/code_layout.h) rather than in a code window of their own.
RECUR_LOAD_PATH size_t dtype_size(DType t) {
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
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      return 1;
    case DType::kString:
      return sizeof(std::string);
    case DType::kSequence:
    case DType::kNone:
    case DType::kMap:
    case DType::kUndefined:
      return 0;
  }
  return 0;
}

size_t dtype_bits(DType t) {
  switch (t) {
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kUInt2:
    case DType::kInt2:
      return 2;
    default:
      return 8 * dtype_size(t);
  }
}

namespace {
struct NamedType {
  DType type;
  std::string_view name;
};
constexpr NamedType kNames[] = {
    {DType::kFloat32, "float32"},
    {DType::kUInt8, "uint8"},
    {DType::kInt8, "int8"},
    {DType::kUInt16, "uint16"},
    {DType::kInt16, "int16"},
    {DType::kInt32, "int32"},
    {DType::kInt64, "int64"},
    {DType::kString, "string"},
    {DType::kBool, "bool"},
    {DType::kFloat16, "float16"},
    {DType::kFloat64, "float64"},
    {DType::kUInt32, "uint32"},
    {DType::kUInt64, "uint64"},
    {DType::kBFloat16, "bfloat16"},
    {DType::kSequence, "sequence"},
    {DType::kNone, "none"},
    {DType::kMap, "map"},
    {DType::kFloat8E4M3FN, "float8e4m3fn"},
    {DType::kFloat8E4M3FNUZ, "float8e4m3fnuz"},
    {DType::kFloat8E5M2, "float8e5m2"},
    {DType::kFloat8E5M2FNUZ, "float8e5m2fnuz"},
    {DType::kUInt4, "uint4"},
    {DType::kInt4, "int4"},
    {DType::kFloat4E2M1, "float4e2m1"},
    {DType::kFloat8E8M0, "float8e8m0"},
    {DType::kUInt2, "uint2"},
    {DType::kInt2, "int2"},
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

RECUR_LOAD_PATH bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

bool is_float8(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ || t == DType::kFloat8E8M0;
}

bool is_float4(DType t) { return t == DType::kFloat4E2M1; }

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
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kUInt2:
    case DType::kInt2:
      return true;
    default:
      return false;
  }
}

bool is_signed(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64 ||
         t == DType::kInt4 || t == DType::kInt2 || t == DType::kFloat4E2M1 || is_floating(t) ||
         (is_float8(t) && t != DType::kFloat8E8M0);
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

namespace {

// The layout of a float8 format: mantissa bits, exponent bias, largest finite value, and the
// encodings of its NaN and largest finite magnitude.
struct Float8Format {
  int mant_bits;
  int bias;
  float max;
  uint8_t max_bits;
  bool fnuz;  // no -0, no infinities, NaN = 0x80
  bool has_inf;
};

Float8Format float8_format(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FNUZ:
      return {3, 8, 240.0f, 0x7F, true, false};
    case DType::kFloat8E5M2:
      return {2, 15, 57344.0f, 0x7B, false, true};
    case DType::kFloat8E5M2FNUZ:
      return {2, 16, 57344.0f, 0x7F, true, false};
    default:  // kFloat8E4M3FN
      return {3, 7, 448.0f, 0x7E, false, false};
  }
}

// The NaN of a format: E4M3FN and E5M2 keep the sign.
uint8_t float8_nan(const Float8Format& f, uint8_t sign) {
  return f.fnuz ? 0x80 : static_cast<uint8_t>(sign | 0x7F);
}

}  // namespace

float float8_to_float(uint8_t bits, DType t) {
  if (t == DType::kFloat8E8M0) {
    // Code 0 is 2^-127, a float32 subnormal: ldexp gives it exactly.
    return bits == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, bits - 127);
  }
  const Float8Format f = float8_format(t);
  if (f.fnuz && bits == 0x80) return std::numeric_limits<float>::quiet_NaN();
  const bool neg = (bits & 0x80) != 0;
  const int exp_bits = 7 - f.mant_bits;
  const int exp = (bits >> f.mant_bits) & ((1 << exp_bits) - 1);
  const int mant = bits & ((1 << f.mant_bits) - 1);
  const int exp_max = (1 << exp_bits) - 1;
  float v;
  if (!f.fnuz && f.has_inf && exp == exp_max) {
    v = mant == 0 ? std::numeric_limits<float>::infinity()
                  : std::numeric_limits<float>::quiet_NaN();
  } else if (!f.fnuz && !f.has_inf && exp == exp_max && mant == (1 << f.mant_bits) - 1) {
    v = std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), 1 - f.bias - f.mant_bits);
  } else {
    v = std::ldexp(static_cast<float>(mant + (1 << f.mant_bits)), exp - f.bias - f.mant_bits);
  }
  return neg ? -v : v;
}

uint8_t float_to_float8(float x, DType t, bool saturate) {
  if (t == DType::kFloat8E8M0) return float_to_float8e8m0(x, saturate, E8M0Round::kUp);
  const Float8Format f = float8_format(t);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x)) return float8_nan(f, sign);
  if (std::isinf(x)) {
    if (saturate) return static_cast<uint8_t>(sign | f.max_bits);
    return f.has_inf ? static_cast<uint8_t>(sign | 0x7C) : float8_nan(f, sign);
  }
  const float a = std::fabs(x);
  const int emin = 1 - f.bias;  // the exponent of the smallest normal value
  // The spacing of representable values around a, then a rounded to it (half to even: the
  // default rounding mode). Scaling by powers of two is exact, so this rounds once.
  const int e = a == 0.0f ? emin : std::max(std::ilogb(a), emin);
  const int q = e - f.mant_bits;
  const float k = std::nearbyint(std::ldexp(a, -q));
  const float r = std::ldexp(k, q);
  if (r > f.max) {
    if (saturate) return static_cast<uint8_t>(sign | f.max_bits);
    return f.has_inf ? static_cast<uint8_t>(sign | 0x7C) : float8_nan(f, sign);
  }
  if (r == 0.0f) return f.fnuz ? 0x00 : sign;
  uint32_t code;
  const int re = std::ilogb(r);
  if (re < emin) {
    code = static_cast<uint32_t>(std::ldexp(r, f.mant_bits - emin));
  } else {
    const auto mant = static_cast<uint32_t>(std::ldexp(r, f.mant_bits - re)) - (1u << f.mant_bits);
    code = static_cast<uint32_t>(re + f.bias) << f.mant_bits | mant;
  }
  return static_cast<uint8_t>(sign | code);
}

uint8_t float_to_float8e8m0(float x, bool saturate, E8M0Round round) {
  // Both the float32 exponent field and the E8M0 code are biased by 127, so a normal float
  // keeps its exponent field and only the mantissa decides the rounding.
  const uint32_t b = std::bit_cast<uint32_t>(x);
  const uint32_t exp = (b >> 23) & 0xFFu;
  const uint32_t mant = b & 0x7FFFFFu;
  if (exp == 0xFF) return mant != 0 || !saturate ? 0xFF : 0xFE;  // NaN; Inf as the table says
  uint32_t code;
  bool up;
  if (exp == 0) {
    // Subnormal: the value is mant * 2^-149, and code 0 (2^-127) is mant == 2^22. Nothing
    // lies below code 0, so smaller values (and 0) go to it, or to NaN without saturate.
    constexpr uint32_t kMin = 0x400000u;
    if (mant < kMin) {
      const bool reaches_min = round == E8M0Round::kUp && mant != 0;
      return saturate || reaches_min ? 0x00 : 0xFF;
    }
    code = 0;
    const uint32_t frac = mant - kMin;  // above 2^-127, out of 2^22 up to 2^-126
    up = round == E8M0Round::kUp        ? frac != 0
         : round == E8M0Round::kNearest ? frac >= kMin / 2
                                        : false;
  } else {
    code = exp;
    up = round == E8M0Round::kUp        ? mant != 0
         : round == E8M0Round::kNearest ? mant >= 0x400000u  // ties (1.5 * 2^e) go up
                                        : false;
  }
  if (up) ++code;
  if (code >= 0xFF) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(code);
}

float float4e2m1_to_float(uint8_t bits) {
  static constexpr float kValues[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = kValues[bits & 0x7];
  return bits & 0x8 ? -v : v;
}

uint8_t float_to_float4e2m1(float x) {
  // NaN: -0, what ONNX 1.20's reference and test data give (float4.md's table says +6).
  if (std::isnan(x)) return 0x8;
  const uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
  const float a = std::fabs(x);
  if (a >= 6.0f) return static_cast<uint8_t>(sign | 0x7);
  // Round to the spacing around a (0.5 below 2, 1 in [2, 4), 2 in [4, 6]), half to even.
  const int e = a < 1.0f ? 0 : std::ilogb(a);
  const float r = std::ldexp(std::nearbyint(std::ldexp(a, 1 - e)), e - 1);
  if (r >= 6.0f) return static_cast<uint8_t>(sign | 0x7);
  uint8_t code;
  if (r < 1.0f) {
    code = static_cast<uint8_t>(r * 2.0f);  // 0, 0.5 -> codes 0, 1
  } else {
    const int re = std::ilogb(r);
    const int m = static_cast<int>(std::ldexp(r, 1 - re)) - 2;  // 0 or 1
    code = static_cast<uint8_t>((re + 1) << 1 | m);
  }
  return static_cast<uint8_t>(sign | code);
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
