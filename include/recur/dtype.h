// Element types. The numeric values are ONNX's TensorProto.DataType codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "recur/export.h"

namespace recur {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  // The 4-bit integers are held unpacked, one byte per element (int4 sign-extended), and are
  // packed two per byte only in TensorProto raw_data: kernels index them like int8/uint8.
  kUInt4 = 21,
  kInt4 = 22,
  // IR version 11: 1 sign, 2 exponent and 1 mantissa bit, no infinities or NaN. Held one
  // byte per element (the code in the low nibble), packed two per byte in raw_data like int4.
  kFloat4E2M1 = 23,
  // IR version 12: an exponent only (2^(e - 127)), no sign, no zero, 0xFF = NaN. One byte.
  kFloat8E8M0 = 24,
  // IR version 13: held unpacked one byte per element (int2 sign-extended) like int4, packed
  // four per byte (first element in the lowest bits) in raw_data.
  kUInt2 = 25,
  kInt2 = 26,
  // Not a TensorProto code: a value that is an ONNX sequence of tensors (Tensor::sequence).
  kSequence = 1000,
  // Not a TensorProto code: an empty ONNX optional (Tensor::none). A present optional is
  // simply its tensor or sequence.
  kNone = 1001,
  // Not a TensorProto code: an ONNX map (Tensor::map), with int64 or string keys and values
  // of one element type. The ai.onnx.ml operators make and take them (ZipMap, DictVectorizer).
  kMap = 1002,
};

// Size of one element in bytes; sizeof(std::string) for kString, 0 for kUndefined, kSequence,
// kNone and kMap.
RECUR_API size_t dtype_size(DType t);
// Bits one element takes in TensorProto raw_data: 4 for int4, uint4 and float4e2m1, 2 for
// int2 and uint2, 8 * dtype_size otherwise.
RECUR_API size_t dtype_bits(DType t);
// "float32", "int64", ... as numpy spells them.
RECUR_API std::string_view dtype_name(DType t);
// Parses dtype_name()'s spellings; nullopt if unknown.
RECUR_API std::optional<DType> dtype_from_name(std::string_view name);
// float32, float64, float16 and bfloat16: the types arithmetic kernels compute in. The float8
// types are storage formats (is_float8) and are not included.
RECUR_API bool is_floating(DType t);
RECUR_API bool is_float8(DType t);   // the float8 formats, float8e8m0 included
RECUR_API bool is_float4(DType t);   // float4e2m1, a storage format like the float8 types
RECUR_API bool is_integer(DType t);  // signed or unsigned integer, not bool
RECUR_API bool is_signed(DType t);

// IEEE 754 binary16, stored as bits. Conversions round to nearest even.
struct RECUR_API Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f);
  explicit operator float() const;
  static Float16 from_bits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
};

// bfloat16: the upper half of a float32. Conversions round to nearest even.
struct RECUR_API BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f);
  explicit operator float() const;
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

// The float8 formats of ONNX (opset 19). E4M3FN has no infinities and NaN = S.1111.111;
// E5M2 is IEEE-like; the FNUZ variants have no -0, no infinities and NaN = 1.0000.000.
// float_to_float8 rounds to nearest even; with `saturate`, values beyond the largest finite
// value and the infinities become +-max, without it they become NaN (or +-Inf for E5M2), as
// the tables of Cast-19 say. One exception to those tables: with `saturate`, +-Inf become
// +-max in the FNUZ types too (the table says NaN), as ONNX's reference and test data do.
RECUR_API float float8_to_float(uint8_t bits, DType t);
RECUR_API uint8_t float_to_float8(float f, DType t, bool saturate = true);

// float8e8m0 (Cast-24): an exponent only. How a float between two powers of two rounds:
// kUp away from zero (the default of Cast and what float_to_float8 does), kDown towards
// zero, kNearest to the nearer one with ties up. As ONNX's reference does, the conversion
// reads the float32 exponent and ignores the sign; 0 and float32 subnormals go to the
// smallest codes. With `saturate`, a rounding up past the largest code stays there; without
// it, it becomes NaN. NaN and +-Inf become NaN (0xFF) either way.
enum class E8M0Round { kUp, kDown, kNearest };
RECUR_API uint8_t float_to_float8e8m0(float f, bool saturate = true,
                                      E8M0Round round = E8M0Round::kUp);

// float4e2m1: always saturating, as its Cast table says (saturate does not apply): beyond +-6
// and +-Inf become +-6; otherwise round to nearest even. NaN becomes -0 (code 0x8), as ONNX
// 1.20's reference and test data have it, not the +6 of the table.
RECUR_API float float4e2m1_to_float(uint8_t bits);
RECUR_API uint8_t float_to_float4e2m1(float f);

template <DType D>
struct Float8 {
  uint8_t bits = 0;
  Float8() = default;
  explicit Float8(float f, bool saturate = true) : bits(float_to_float8(f, D, saturate)) {}
  explicit operator float() const { return float8_to_float(bits, D); }
  static Float8 from_bits(uint8_t b) {
    Float8 h;
    h.bits = b;
    return h;
  }
};
using Float8E4M3FN = Float8<DType::kFloat8E4M3FN>;
using Float8E4M3FNUZ = Float8<DType::kFloat8E4M3FNUZ>;
using Float8E5M2 = Float8<DType::kFloat8E5M2>;
using Float8E5M2FNUZ = Float8<DType::kFloat8E5M2FNUZ>;
using Float8E8M0 = Float8<DType::kFloat8E8M0>;

struct Float4E2M1 {
  uint8_t bits = 0;  // the 4-bit code in the low nibble
  Float4E2M1() = default;
  explicit Float4E2M1(float f) : bits(float_to_float4e2m1(f)) {}
  explicit operator float() const { return float4e2m1_to_float(bits); }
  static Float4E2M1 from_bits(uint8_t b) {
    Float4E2M1 h;
    h.bits = b;
    return h;
  }
};

// A 4-bit integer held in one byte (int4 sign-extended into int8, uint4 in uint8).
struct Int4 {
  int8_t value = 0;
};
struct UInt4 {
  uint8_t value = 0;
};
// A 2-bit integer held in one byte (int2 sign-extended into int8, uint2 in uint8).
struct Int2 {
  int8_t value = 0;
};
struct UInt2 {
  uint8_t value = 0;
};

RECUR_API float half_to_float(uint16_t bits);
RECUR_API uint16_t float_to_half(float f);

}  // namespace recur
