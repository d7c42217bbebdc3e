// Running a templated kernel body for a tensor's runtime dtype.
#pragma once

#include <type_traits>

#include "recur/tensor.h"

namespace recur::reference {

template <class... Ts>
struct TypeList {};

template <class... A, class... B>
constexpr TypeList<A..., B...> operator+(TypeList<A...>, TypeList<B...>) {
  return {};
}

inline constexpr TypeList<float, double, Float16, BFloat16> kFloatTypes{};
inline constexpr TypeList<int8_t, int16_t, int32_t, int64_t> kSignedIntTypes{};
inline constexpr TypeList<uint8_t, uint16_t, uint32_t, uint64_t> kUnsignedIntTypes{};
inline constexpr auto kIntTypes = kSignedIntTypes + kUnsignedIntTypes;
inline constexpr auto kNumericTypes = kFloatTypes + kIntTypes;
inline constexpr auto kAllTypes = kNumericTypes + TypeList<bool>{};
// Storage-only types: kernels that compute convert them to float or int first.
inline constexpr TypeList<Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ> kFloat8Types{};
inline constexpr TypeList<Int4, UInt4> kInt4Types{};
inline constexpr TypeList<Int2, UInt2> kInt2Types{};
// float8e8m0 and float4e2m1 (IR 11-12) are apart from kFloat8Types: the operators that take
// the float8 types of opset 19 do not all take these (float8e8m0 has no sign).
inline constexpr TypeList<Float8E8M0, Float4E2M1> kMxFloatTypes{};

template <class T>
inline constexpr bool is_float8_v =
    std::is_same_v<T, Float8E4M3FN> || std::is_same_v<T, Float8E4M3FNUZ> ||
    std::is_same_v<T, Float8E5M2> || std::is_same_v<T, Float8E5M2FNUZ> ||
    std::is_same_v<T, Float8E8M0>;
template <class T>
inline constexpr bool is_float4_v = std::is_same_v<T, Float4E2M1>;
template <class T>
inline constexpr bool is_int4_v = std::is_same_v<T, Int4> || std::is_same_v<T, UInt4>;
template <class T>
inline constexpr bool is_int2_v = std::is_same_v<T, Int2> || std::is_same_v<T, UInt2>;

// Calls f(std::type_identity<T>{}) for the T in the list whose dtype is `t`. Returns false if
// `t` is not in the list.
template <class... Ts, class F>
bool visit_dtype(TypeList<Ts...>, DType t, F&& f) {
  return ((t == dtype_of_v<Ts> ? (f(std::type_identity<Ts>{}), true) : false) || ...);
}

// The type arithmetic is done in: float for the 16-bit and 8-bit floats, the type itself
// otherwise.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> ||
                                         is_float8_v<T> || is_float4_v<T>,
                                     float, T>;

template <class T>
inline compute_t<T> to_compute(T v) {
  return static_cast<compute_t<T>>(v);
}
template <class T>
inline T from_compute(compute_t<T> v) {
  return static_cast<T>(v);
}

}  // namespace recur::reference
