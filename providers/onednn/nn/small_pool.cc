#include "providers/onednn/nn/small_pool.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "providers/onednn/common/avx512.h"

namespace recur::onednn {

namespace {

using avx512::kLanes;
using avx512::lanes;

// The kernel taps [k0, k1) of a window starting at `start`, of k taps `d` apart, that fall
// inside [0, size).
inline std::pair<int64_t, int64_t> taps_inside(int64_t start, int64_t k, int64_t d, int64_t size) {
  const int64_t k0 = start >= 0 ? 0 : (-start + d - 1) / d;
  const int64_t k1 = start >= size ? 0 : std::min(k, (size - start + d - 1) / d);
  return {k0, std::max(k0, k1)};
}

template <bool kMax>
RECUR_AVX512 inline __m512 combine(__m512 acc, __m512 v) {
  // max(v, acc) returns acc where v is a NaN: a NaN is never the largest.
  if constexpr (kMax) return _mm512_max_ps(v, acc);
  return _mm512_add_ps(acc, v);
}

// Output row oy's kernel rows reduced column by column into buffer oy % 2 of `rows`.
template <bool kMax>
RECUR_AVX512 void reduce_rows(const SmallPool2d& p, const float* x, float* rows, int64_t len,
                              __m512 fill, int64_t oy) {
  const int64_t W = p.W;
  float* in_row = rows + (oy % 2) * len + p.pad_l;
  const auto [ky0, ky1] = taps_inside(oy * p.sh - p.pad_t, p.kh, p.dh, p.H);
  const int64_t iy0 = oy * p.sh - p.pad_t;
  for (int64_t c = 0; c < W; c += kLanes) {
    const __mmask16 m = lanes(W - c);
    __m512 acc = fill;
    for (int64_t ky = ky0; ky < ky1; ++ky)
      acc = combine<kMax>(acc, _mm512_mask_loadu_ps(fill, m, x + (iy0 + ky * p.dh) * W + c));
    _mm512_mask_storeu_ps(in_row + c, m, acc);
  }
}

// One plane: each output row first reduces its kh input rows, column by column, into a row
// buffer (input column c at [pad_l + c], the fill value around it), then reduces kw taps of
// that buffer per output: contiguous loads for stride 1, every other element of two loads for
// stride 2, a gather otherwise. Two buffers alternate, row oy + 1 reduced before row oy's
// taps are read: read right after the stores that wrote it, at other offsets, a buffer stalls
// its loads on store forwarding. `rows` holds two buffers of SmallPool2d::row_floats() floats,
// filled by the caller.
template <bool kMax>
RECUR_AVX512 void pool_plane(const SmallPool2d& p, const float* x, float* y, float* rows) {
  const int64_t OH = p.OH, OW = p.OW, sw = p.sw, kw = p.kw, dw = p.dw, len = p.row_floats();
  const float* inv_count = p.inv_count.data();
  const __m512 fill = _mm512_set1_ps(kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i strided =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int32_t>(sw)));
  reduce_rows<kMax>(p, x, rows, len, fill, 0);
  for (int64_t oy = 0; oy < OH; ++oy) {
    if (oy + 1 < OH) reduce_rows<kMax>(p, x, rows, len, fill, oy + 1);
    const float* row = rows + (oy % 2) * len;
    for (int64_t ox = 0; ox < OW; ox += kLanes) {
      const float* base = row + ox * sw;
      __m512 acc = fill;
      if (sw == 1) {
        for (int64_t kx = 0; kx < kw; ++kx)
          acc = combine<kMax>(acc, _mm512_loadu_ps(base + kx * dw));
      } else if (sw == 2) {
        for (int64_t kx = 0; kx < kw; ++kx) {
          const float* tap = base + kx * dw;
          acc = combine<kMax>(acc, _mm512_permutex2var_ps(_mm512_loadu_ps(tap), even,
                                                          _mm512_loadu_ps(tap + kLanes)));
        }
      } else {
        for (int64_t kx = 0; kx < kw; ++kx)
          acc = combine<kMax>(acc, _mm512_i32gather_ps(strided, base + kx * dw, 4));
      }
      const __mmask16 m = lanes(OW - ox);
      if constexpr (!kMax)
        acc = _mm512_mul_ps(acc, _mm512_maskz_loadu_ps(m, inv_count + oy * OW + ox));
      _mm512_mask_storeu_ps(y + oy * OW + ox, m, acc);
    }
  }
}

// One plane of channel-blocked X [H, W, 16] (runtime/graph/blocked.h): each tap of a window is
// one vector of 16 channels, so each output is a loop of whole-vector loads.
template <bool kMax>
RECUR_AVX512 void pool_blocked_plane(const SmallPool2d& p, const float* x, float* y) {
  const __m512 fill = _mm512_set1_ps(kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  for (int64_t oy = 0; oy < p.OH; ++oy) {
    const int64_t iy0 = oy * p.sh - p.pad_t;
    const auto [ky0, ky1] = taps_inside(iy0, p.kh, p.dh, p.H);
    for (int64_t ox = 0; ox < p.OW; ++ox) {
      const int64_t ix0 = ox * p.sw - p.pad_l;
      const auto [kx0, kx1] = taps_inside(ix0, p.kw, p.dw, p.W);
      __m512 acc = fill;
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        const float* row = x + (iy0 + ky * p.dh) * p.W * kLanes;
        for (int64_t kx = kx0; kx < kx1; ++kx)
          acc = combine<kMax>(acc, _mm512_loadu_ps(row + (ix0 + kx * p.dw) * kLanes));
      }
      if constexpr (!kMax) acc = _mm512_mul_ps(acc, _mm512_set1_ps(p.inv_count[oy * p.OW + ox]));
      _mm512_storeu_ps(y + (oy * p.OW + ox) * kLanes, acc);
    }
  }
}

RECUR_AVX512 float reduce_plane(bool max, const float* x, int64_t size) {
  __m512 acc = max ? _mm512_set1_ps(-std::numeric_limits<float>::infinity()) : _mm512_setzero_ps();
  for (int64_t i = 0; i < size; i += kLanes) {
    const __mmask16 m = lanes(size - i);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    acc = max ? _mm512_mask_max_ps(acc, m, v, acc) : _mm512_add_ps(acc, v);
  }
  return max ? _mm512_reduce_max_ps(acc) : _mm512_reduce_add_ps(acc) / static_cast<float>(size);
}

}  // namespace

SmallPool2d SmallPool2d::make(bool max, bool include_pad, int64_t H, int64_t W, int64_t OH,
                              int64_t OW, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                              int64_t pad_t, int64_t pad_l, int64_t pad_b, int64_t pad_r,
                              int64_t dh, int64_t dw) {
  SmallPool2d p;
  p.max = max;
  p.H = H;
  p.W = W;
  p.OH = OH;
  p.OW = OW;
  p.kh = kh;
  p.kw = kw;
  p.sh = sh;
  p.sw = sw;
  p.pad_t = pad_t;
  p.pad_l = pad_l;
  p.dh = dh;
  p.dw = dw;
  if (max) return p;
  // The taps counted along one axis for a window starting at `start`.
  const auto taps = [&](int64_t start, int64_t k, int64_t d, int64_t size, int64_t pad_lo,
                        int64_t pad_hi) {
    const int64_t lo = include_pad ? -pad_lo : 0;
    const auto [k0, k1] = taps_inside(start - lo, k, d, (include_pad ? size + pad_hi : size) - lo);
    return k1 - k0;
  };
  p.inv_count.resize(static_cast<size_t>(OH * OW));
  for (int64_t oy = 0; oy < OH; ++oy) {
    const int64_t cy = taps(oy * sh - pad_t, kh, dh, H, pad_t, pad_b);
    for (int64_t ox = 0; ox < OW; ++ox) {
      const int64_t c = cy * taps(ox * sw - pad_l, kw, dw, W, pad_l, pad_r);
      // A window of no tap averages nothing: 0 / 0, as the reference computes it.
      p.inv_count[static_cast<size_t>(oy * OW + ox)] =
          c > 0 ? 1.0f / static_cast<float>(c) : std::numeric_limits<float>::quiet_NaN();
    }
  }
  return p;
}

int64_t SmallPool2d::row_floats() const {
  // The last vector of outputs reads up to (its first output + 15) * sw + (kw - 1) * dw + 16.
  const int64_t outputs = (OW + kLanes - 1) / kLanes * kLanes;
  return std::max(pad_l + W, outputs * sw + (kw - 1) * dw + 1 + kLanes);
}

void run_small_pool2d(const SmallPool2d& p, int64_t planes, const float* x, float* y) {
  // The fill around each buffer's input columns is never written over.
  float rows[2 * SmallPool2d::kMaxRow];
  std::fill(rows, rows + 2 * p.row_floats(),
            p.max ? -std::numeric_limits<float>::infinity() : 0.0f);
  for (int64_t i = 0; i < planes; ++i) {
    if (p.max) {
      pool_plane<true>(p, x + i * p.H * p.W, y + i * p.OH * p.OW, rows);
    } else {
      pool_plane<false>(p, x + i * p.H * p.W, y + i * p.OH * p.OW, rows);
    }
  }
}

void run_blocked_pool2d(const SmallPool2d& p, int64_t planes, const float* x, float* y) {
  const int64_t in = p.H * p.W * kLanes, out = p.OH * p.OW * kLanes;
  for (int64_t i = 0; i < planes; ++i) {
    if (p.max) {
      pool_blocked_plane<true>(p, x + i * in, y + i * out);
    } else {
      pool_blocked_plane<false>(p, x + i * in, y + i * out);
    }
  }
}

void run_global_pool(bool max, int64_t planes, int64_t size, const float* x, float* y) {
  for (int64_t i = 0; i < planes; ++i) y[i] = reduce_plane(max, x + i * size, size);
}

}  // namespace recur::onednn
