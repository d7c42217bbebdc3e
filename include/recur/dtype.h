// Element types. The numeric values are ONNX's TensorProto.DataType codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

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
  // Not a TensorProto code: a value that is an ONNX sequence of tensors (Tensor::sequence).
  kSequence = 1000,
  // Not a TensorProto code: an empty ONNX optional (Tensor::none). A present optional is
  // simply its tensor or sequence.
  kNone = 1001,
};

// Size of one element in bytes; sizeof(std::string) for kString, 0 for kUndefined and
// kSequence.
size_t dtype_size(DType t);
// "float32", "int64", ... as numpy spells them.
std::string_view dtype_name(DType t);
// Parses dtype_name()'s spellings; nullopt if unknown.
std::optional<DType> dtype_from_name(std::string_view name);
bool is_floating(DType t);
bool is_integer(DType t);  // signed or unsigned integer, not bool
bool is_signed(DType t);

// IEEE 754 binary16, stored as bits. Conversions round to nearest even.
struct Float16 {
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
struct BFloat16 {
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

float half_to_float(uint16_t bits);
uint16_t float_to_half(float f);

}  // namespace recur
