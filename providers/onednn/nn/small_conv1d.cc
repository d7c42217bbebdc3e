#include "providers/onednn/nn/small_conv1d.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "providers/onednn/common/avx512.h"

namespace recur::onednn {

namespace {

constexpr int64_t kLanes = avx512::kLanes;
constexpr int kMaxRows = 4;     // output channels a block holds
constexpr int kMaxVectors = 4;  // vectors of steps a block holds: 4 x 4 accumulators

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Steps a phase of one channel holds: every step a vector of outputs may read, padding
// included, so that the last vector's loads stay inside.
int64_t phase_len(const SmallConv1d& p) {
  return round_up(p.To, kLanes) + (p.k - 1) * p.dilation / p.stride + 1;
}

// Where out[q] = x[q s + base] reads inside a row of Ti values: q in [lo, hi), for q < Q.
struct PhaseSpan {
  int64_t s = 1, base = 0, lo = 0, hi = 0, Q = 0;
};

PhaseSpan phase_span(int64_t Ti, int64_t s, int64_t base, int64_t Q) {
  PhaseSpan p;
  p.s = s;
  p.base = base;
  p.Q = Q;
  p.lo = std::clamp<int64_t>(base >= 0 ? 0 : (-base + s - 1) / s, 0, Q);
  p.hi = std::clamp<int64_t>(Ti - base <= 0 ? 0 : (Ti - base + s - 1) / s, p.lo, Q);
  return p;
}

// out[q] = x[q s + base] for q < Q, 0 outside the span. Vectors of 16 inside: for a stride of
// 2 the even lanes of two loads (a strided convolution's phases), else a gather; the copy had
// been a scalar loop with a bounds test an element, which cost a 2-D depthwise convolution of
// stride 2 more than its multiply-adds.
RECUR_AVX512 void copy_phase(const float* x, const PhaseSpan& p, float* out) {
  std::fill(out, out + p.lo, 0.0f);
  int64_t q = p.lo;
  if (p.s == 1) {
    std::memcpy(out + q, x + q + p.base, static_cast<size_t>(p.hi - q) * sizeof(float));
    q = p.hi;
  } else if (p.s == 2) {
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    // The second load reads up to index 2 q + base + 31, which the span's last q + 1 bounds.
    for (; q + kLanes + 1 <= p.hi; q += kLanes) {
      const float* xs = x + 2 * q + p.base;
      _mm512_storeu_ps(
          out + q, _mm512_permutex2var_ps(_mm512_loadu_ps(xs), even, _mm512_loadu_ps(xs + kLanes)));
    }
  } else {
    const __m512i index =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(static_cast<int>(p.s)));
    for (; q + kLanes <= p.hi; q += kLanes)
      _mm512_storeu_ps(out + q, _mm512_i32gather_ps(index, x + q * p.s + p.base, sizeof(float)));
  }
  for (; q < p.hi; ++q) out[q] = x[q * p.s + p.base];
  std::fill(out + p.hi, out + p.Q, 0.0f);
}

// scratch[(c * stride + r) * Q + q] = rows[c][q * stride + r - pad_l], 0 outside the row (and
// everywhere for a null row).
RECUR_AVX512 void fill_phases(const SmallConv1d& p, const float* const* rows, float* scratch) {
  const int64_t Q = phase_len(p), s = p.stride;
  for (int64_t r = 0; r < s; ++r) {
    const PhaseSpan span = phase_span(p.Ti, s, r - p.pad_l, Q);  // the same for every channel
    for (int64_t c = 0; c < p.C; ++c) {
      float* out = scratch + (c * s + r) * Q;
      if (rows[c]) {
        copy_phase(rows[c], span, out);
      } else {
        std::fill(out, out + Q, 0.0f);
      }
    }
  }
}

// The activation written with each output vector.
RECUR_AVX512 inline __m512 post16(SmallConv1d::Post post, float alpha, __m512 v) {
  if (post == SmallConv1d::Post::kRelu && alpha == 0.0f) {
    // Not v * 0 below 0, which is NaN at -inf; max returns its second operand, so NaN stays
    // NaN, as in the reference's Relu.
    return _mm512_max_ps(_mm512_setzero_ps(), v);
  }
  if (post == SmallConv1d::Post::kRelu) {
    const __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_mul_ps(v, neg, v, _mm512_set1_ps(alpha));
  }
  if (post == SmallConv1d::Post::kSigmoid) return avx512::sigmoid16(v);
  if (post == SmallConv1d::Post::kHardSwish) return avx512::hardswish16(v);
  return v;
}

// Output channels m0 .. m0 + MB - 1 (one group) at steps t0 .. t0 + 16 TB - 1 of one batch row.
template <int MB, int TB>
RECUR_AVX512 void block(const SmallConv1d& p, const float* phases, const float* w, const float* b,
                        int64_t m0, int64_t t0, float* y) {
  const int64_t Cg = p.C / p.G, Q = phase_len(p), s = p.stride;
  const int64_t c0 = m0 / (p.M / p.G) * Cg;
  __m512 acc[MB][TB];
  for (int mb = 0; mb < MB; ++mb) {
    const __m512 init = b ? _mm512_set1_ps(b[m0 + mb]) : _mm512_setzero_ps();
    for (int tb = 0; tb < TB; ++tb) acc[mb][tb] = init;
  }
  const float* wm = w + m0 * Cg * p.k;
  for (int64_t c = 0; c < Cg; ++c) {
    const float* wc = wm + c * p.k;
    const float* xc = phases + (c0 + c) * s * Q + t0;
    for (int64_t j = 0; j < p.k; ++j) {
      const int64_t off = j * p.dilation;
      const float* xs = xc + (off % s) * Q + off / s;
      __m512 xv[TB];
      for (int tb = 0; tb < TB; ++tb) xv[tb] = _mm512_loadu_ps(xs + tb * kLanes);
      for (int mb = 0; mb < MB; ++mb) {
        const __m512 wv = _mm512_set1_ps(wc[mb * Cg * p.k + j]);
        for (int tb = 0; tb < TB; ++tb) acc[mb][tb] = _mm512_fmadd_ps(wv, xv[tb], acc[mb][tb]);
      }
    }
  }
  const int64_t y_stride = p.y_stride > 0 ? p.y_stride : p.To;
  for (int mb = 0; mb < MB; ++mb) {
    float* ym = y + (m0 + mb) * y_stride;
    for (int tb = 0; tb < TB; ++tb) {
      const int64_t t = t0 + tb * kLanes;
      _mm512_mask_storeu_ps(ym + t, avx512::lanes(p.To - t), post16(p.post, p.alpha, acc[mb][tb]));
    }
  }
}

// The depthwise 2-D convolution's row length per phase (phase_len's rule over the width).
int64_t dw_phase_len(const DepthwiseConv2d& p) {
  return round_up(p.OW, kLanes) + (p.kw - 1) * p.dw / p.sw + 1;
}

// Output row oy of one channel at positions t0 .. t0 + 16 TB - 1; rows: the channel's rows,
// each as sw phases of Q values; taps[kx]: where tap kx reads in a row, from t0.
template <int TB>
RECUR_AVX512 void dw_block(const DepthwiseConv2d& p, const float* rows, int64_t Q,
                           const int64_t* taps, const float* w, float bias, int64_t oy, int64_t t0,
                           float* y) {
  __m512 acc[TB];
  for (int tb = 0; tb < TB; ++tb) acc[tb] = _mm512_set1_ps(bias);
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const int64_t iy = oy * p.sh + ky * p.dh - p.pad_t;
    if (iy < 0 || iy >= p.H) continue;  // zero rows add nothing
    const float* row = rows + iy * p.sw * Q + t0;
    const float* wk = w + ky * p.kw;
    for (int64_t kx = 0; kx < p.kw; ++kx) {
      const float* xs = row + taps[kx];
      const __m512 wv = _mm512_set1_ps(wk[kx]);
      for (int tb = 0; tb < TB; ++tb)
        acc[tb] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xs + tb * kLanes), acc[tb]);
    }
  }
  for (int tb = 0; tb < TB; ++tb) {
    const int64_t t = t0 + tb * kLanes;
    _mm512_mask_storeu_ps(y + oy * p.OW + t, avx512::lanes(p.OW - t),
                          post16(p.post, p.alpha, acc[tb]));
  }
}

using BlockFn = void (*)(const SmallConv1d&, const float*, const float*, const float*, int64_t,
                         int64_t, float*);

template <int MB, int... TB>
constexpr std::array<BlockFn, sizeof...(TB)> row_of_blocks(std::integer_sequence<int, TB...>) {
  return {&block<MB, TB + 1>...};
}

constexpr std::array<std::array<BlockFn, kMaxVectors>, kMaxRows> kBlocks = {
    row_of_blocks<1>(std::make_integer_sequence<int, kMaxVectors>()),
    row_of_blocks<2>(std::make_integer_sequence<int, kMaxVectors>()),
    row_of_blocks<3>(std::make_integer_sequence<int, kMaxVectors>()),
    row_of_blocks<4>(std::make_integer_sequence<int, kMaxVectors>())};

using DwBlockFn = void (*)(const DepthwiseConv2d&, const float*, int64_t, const int64_t*,
                           const float*, float, int64_t, int64_t, float*);
constexpr std::array<DwBlockFn, kMaxVectors> kDwBlocks = {&dw_block<1>, &dw_block<2>, &dw_block<3>,
                                                          &dw_block<4>};

}  // namespace

int64_t SmallConv1d::scratch_floats() const {
  // The phases, then C row pointers (two floats each at most, 8-byte aligned).
  return round_up(C * stride * phase_len(*this), 2) + 2 * C;
}

double SmallConv1d::cost() const {
  const double macs = static_cast<double>(M) * static_cast<double>(C / G) * static_cast<double>(k) *
                      static_cast<double>(round_up(To, kLanes) / kLanes);
  const double copy =
      static_cast<double>(C * stride) * (16.0 + static_cast<double>(phase_len(*this)) / kLanes);
  return macs + copy;
}

void run_small_conv1d_rows(const SmallConv1d& p, const float* const* rows, const float* w,
                           const float* b, float* y, float* scratch) {
  const int64_t Mg = p.M / p.G;
  fill_phases(p, rows, scratch);
  for (int64_t g = 0; g < p.G; ++g) {
    for (int64_t m0 = g * Mg; m0 < (g + 1) * Mg; m0 += kMaxRows) {
      const int64_t ms = std::min<int64_t>(kMaxRows, (g + 1) * Mg - m0);
      for (int64_t t0 = 0; t0 < p.To; t0 += kMaxVectors * kLanes) {
        const int64_t vecs = std::min<int64_t>(kMaxVectors, (p.To - t0 + kLanes - 1) / kLanes);
        kBlocks[static_cast<size_t>(ms - 1)][static_cast<size_t>(vecs - 1)](p, scratch, w, b, m0,
                                                                            t0, y);
      }
    }
  }
}

int64_t DepthwiseConv2d::scratch_floats() const { return H * sw * dw_phase_len(*this); }

void run_depthwise_conv2d(const DepthwiseConv2d& p, int64_t N, const float* x, const float* w,
                          const float* b, float* y, float* scratch, int64_t c0, int64_t c1) {
  // Everything with a division, once: each phase's span of the row, each tap's offset.
  const int64_t Q = dw_phase_len(p);
  PhaseSpan spans[DepthwiseConv2d::kMaxStride];
  for (int64_t r = 0; r < p.sw; ++r) spans[r] = phase_span(p.W, p.sw, r - p.pad_l, Q);
  int64_t taps[DepthwiseConv2d::kMaxKernel];
  for (int64_t kx = 0; kx < p.kw; ++kx) {
    const int64_t off = kx * p.dw;
    taps[kx] = (off % p.sw) * Q + off / p.sw;
  }
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = c0; c < c1; ++c) {
      const float* xc = x + (n * p.C + c) * p.H * p.W;
      for (int64_t iy = 0; iy < p.H; ++iy)
        for (int64_t r = 0; r < p.sw; ++r)
          copy_phase(xc + iy * p.W, spans[r], scratch + (iy * p.sw + r) * Q);
      float* yc = y + (n * p.C + c) * p.OH * p.OW;
      const float bias = b ? b[c] : 0.0f;
      for (int64_t oy = 0; oy < p.OH; ++oy) {
        for (int64_t t0 = 0; t0 < p.OW; t0 += kMaxVectors * kLanes) {
          const int64_t vecs = std::min<int64_t>(kMaxVectors, (p.OW - t0 + kLanes - 1) / kLanes);
          kDwBlocks[static_cast<size_t>(vecs - 1)](p, scratch, Q, taps, w + c * p.kh * p.kw, bias,
                                                   oy, t0, yc);
        }
      }
    }
  }
}

void run_small_conv1d(const SmallConv1d& p, int64_t N, const float* x, const float* w,
                      const float* b, float* y, float* scratch) {
  // The channels' rows follow the phases in scratch.
  const float** rows =
      reinterpret_cast<const float**>(scratch + round_up(p.C * p.stride * phase_len(p), 2));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < p.C; ++c) rows[c] = x + (n * p.C + c) * p.Ti;
    run_small_conv1d_rows(p, rows, w, b, y + n * p.M * p.To, scratch);
  }
}

}  // namespace recur::onednn
