// The reductions of ScatterElements and ScatterND.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"

namespace recur::reference {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// `reduction` arrived in opset 16 (none, add, mul); max and min in opset 18.
inline Result<ScatterReduction> parse_scatter_reduction(const std::string& s, int opset) {
  if (s == "none") return ScatterReduction::kNone;
  if (opset < 16)
    return invalid_model("reduction '" + s + "' needs opset 16, this is " + std::to_string(opset));
  if (s == "add") return ScatterReduction::kAdd;
  if (s == "mul") return ScatterReduction::kMul;
  if (opset < 18 && (s == "max" || s == "min")) {
    return invalid_model("reduction '" + s + "' needs opset 18, this is " + std::to_string(opset));
  }
  if (s == "max") return ScatterReduction::kMax;
  if (s == "min") return ScatterReduction::kMin;
  return invalid_model("unknown reduction '" + s + "' (none, add, mul, max or min)");
}

template <class T>
T scatter_combine(ScatterReduction r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case ScatterReduction::kNone:
        return b;
      case ScatterReduction::kAdd:
      case ScatterReduction::kMax:
        return a || b;
      case ScatterReduction::kMul:
      case ScatterReduction::kMin:
        return a && b;
    }
    return b;
  } else if constexpr (std::is_integral_v<T>) {
    // Unsigned arithmetic wraps instead of overflowing (undefined for signed types).
    using U = std::make_unsigned_t<T>;
    switch (r) {
      case ScatterReduction::kNone:
        return b;
      case ScatterReduction::kAdd:
        return static_cast<T>(static_cast<U>(U(a) + U(b)));
      case ScatterReduction::kMul:
        return static_cast<T>(static_cast<U>(U(a) * U(b)));
      case ScatterReduction::kMax:
        return std::max(a, b);
      case ScatterReduction::kMin:
        return std::min(a, b);
    }
    return b;
  } else {
    const compute_t<T> x = to_compute(a), y = to_compute(b);
    switch (r) {
      case ScatterReduction::kNone:
        return b;
      case ScatterReduction::kAdd:
        return from_compute<T>(x + y);
      case ScatterReduction::kMul:
        return from_compute<T>(x * y);
      case ScatterReduction::kMax:
        return from_compute<T>(std::max(x, y));
      case ScatterReduction::kMin:
        return from_compute<T>(std::min(x, y));
    }
    return b;
  }
}

// out[offsets[n] + j] = combine(out[offsets[n] + j], updates[n * block + j]) for j < block, in
// order (so with duplicate offsets and no reduction the last update wins). False for a dtype
// without arithmetic.
inline bool scatter_apply(ScatterReduction r, const Tensor& updates, Tensor& out,
                          const std::vector<int64_t>& offsets, int64_t block) {
  return visit_dtype(kAllTypes, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* u = updates.data<T>();
    T* o = out.data<T>();
    for (size_t n = 0; n < offsets.size(); ++n) {
      T* dst = o + offsets[n];
      const T* src = u + static_cast<int64_t>(n) * block;
      for (int64_t j = 0; j < block; ++j) dst[j] = scatter_combine(r, dst[j], src[j]);
    }
  });
}

}  // namespace recur::reference
