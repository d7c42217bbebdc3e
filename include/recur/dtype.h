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
  // Not a TensorProto code: a value that is an ONNX sequence of tensors (Tensor::sequence).
  kSequence = 1000,
  // Not a TensorProto code: an empty ONNX optional (Tensor::none). A present optional is
  // simply its tensor or sequence.
  kNone = 1001,
};

// Size of one element in bytes; sizeof(std::string) for kString, 0 for kUndefined and
// kSequence.
RECUR_API size_t dtype_size(DType t);
// "float32", "int64", ... as numpy spells them.
RECUR_API std::string_view dtype_name(DType t);
// Parses dtype_name()'s spellings; nullopt if unknown.
RECUR_API std::optional<DType> dtype_from_name(std::string_view name);
// float32, float64, float16 and bfloat16: the types arithmetic kernels compute in. The float8
// types are storage formats (is_float8) and are not included.
RECUR_API bool is_floating(DType t);
RECUR_API bool is_float8(DType t);
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

// A 4-bit integer held in one byte (int4 sign-extended into int8, uint4 in uint8).
struct Int4 {
  int8_t value = 0;
};
struct UInt4 {
  uint8_t value = 0;
};

RECUR_API float half_to_float(uint16_t bits);
RECUR_API uint16_t float_to_half(float f);

}  // namespace recur
