// Whether float32 values hold a NaN or an infinity, on any x86-64: the check a Relu fused into a
// oneDNN primitive needs (its post-op is max(x, 0), which gives 0 for a NaN), on processors
// with AVX-512 and without.
#pragma once

#include <cmath>
#include <cstdint>

#include "providers/onednn/common/avx512.h"

namespace recur::onednn {

inline bool all_finite(const float* x, int64_t n) {
  if (avx512::have_avx512()) return avx512::all_finite(x, n);
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) finite &= std::isfinite(x[i]);
  return finite;
}

// max(y, 0) where y is a number, y itself where it is NaN (NaN < 0 is false).
inline void relu_keeping_nan(float* y, int64_t n) {
  if (avx512::have_avx512()) {
    avx512::unary(avx512::Unary::kRelu, y, n, y, 0.0f, 0.0f);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];
}

}  // namespace recur::onednn
