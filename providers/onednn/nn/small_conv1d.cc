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

// scratch[(c * stride + r) * Q + q] = rows[c][q * stride + r - pad_l], 0 outside the row (and
// everywhere for a null row).
RECUR_AVX512 void fill_phases(const SmallConv1d& p, const float* const* rows, float* scratch) {
  const int64_t Q = phase_len(p), s = p.stride;
  for (int64_t c = 0; c < p.C; ++c) {
    const float* xc = rows[c];
    if (!xc) {
      std::fill(scratch + c * s * Q, scratch + (c + 1) * s * Q, 0.0f);
      continue;
    }
    for (int64_t r = 0; r < s; ++r) {
      float* out = scratch + (c * s + r) * Q;
      if (s == 1) {
        // The common case: zeros, the row, zeros.
        const int64_t lead = std::min(p.pad_l, Q);
        std::fill(out, out + lead, 0.0f);
        const int64_t n = std::clamp<int64_t>(Q - p.pad_l, 0, p.Ti);
        if (n > 0) std::memcpy(out + p.pad_l, xc, static_cast<size_t>(n) * sizeof(float));
        std::fill(out + lead + std::max<int64_t>(n, 0), out + Q, 0.0f);
        continue;
      }
      for (int64_t q = 0; q < Q; ++q) {
        const int64_t t = q * s + r - p.pad_l;
        out[q] = t >= 0 && t < p.Ti ? xc[t] : 0.0f;
      }
    }
  }
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
  const __m512 alpha = _mm512_set1_ps(p.alpha);
  const int64_t y_stride = p.y_stride > 0 ? p.y_stride : p.To;
  for (int mb = 0; mb < MB; ++mb) {
    float* ym = y + (m0 + mb) * y_stride;
    for (int tb = 0; tb < TB; ++tb) {
      __m512 v = acc[mb][tb];
      if (p.post == SmallConv1d::Post::kRelu && p.alpha == 0.0f) {
        // Not v * 0 below 0, which is NaN at -inf; max returns its second operand, so NaN
        // stays NaN, as in the reference's Relu.
        v = _mm512_max_ps(_mm512_setzero_ps(), v);
      } else if (p.post == SmallConv1d::Post::kRelu) {
        const __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        v = _mm512_mask_mul_ps(v, neg, v, alpha);
      } else if (p.post == SmallConv1d::Post::kSigmoid) {
        v = avx512::sigmoid16(v);
      }
      const int64_t t = t0 + tb * kLanes;
      _mm512_mask_storeu_ps(ym + t, avx512::lanes(p.To - t), v);
    }
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
