// Size arithmetic on values read from a model. A hostile model can make any product of its
// dimensions overflow int64_t, which is undefined behaviour and, in practice, a size that
// wraps to something small and passes the shape checks; every size computed from the model
// goes through these instead.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace recur {

// a * b, or nullopt where it does not fit in int64_t.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nullopt where it does not fit in int64_t.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of all factors, or nullopt where any partial product overflows.
inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    const std::optional<int64_t> next = checked_mul(r, f);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

}  // namespace recur
