#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/avx2_rows.h"
#include "runtime/core/code_layout.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/core/page_discard.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace recur::onednn::avx512 {

RECUR_LOAD_PATH bool have_avx512() { return cpu::has(cpu::Feature::kAvx512); }

namespace {

// out[n] = init[n] + in[n].m over the columns [c0, c0 + 16 NV), for NR rows: m is [K][Gp] in
// column blocks of 64 (pack_columns), or with kPanels oneDNN's blocks of [Kp][64] (every block
// 64 wide), each of its vectors loaded once for the NR rows.
template <int NR, int NV, bool kPanels>
RECUR_AVX512 void accumulate(const float* const* init, const float* const* in, int64_t K,
                             const float* m, int64_t Kp, int64_t c0, float* const* out) {
  __m512 acc[NR][NV];
  for (int n = 0; n < NR; ++n)
    for (int v = 0; v < NV; ++v) acc[n][v] = _mm512_load_ps(init[n] + c0 + v * kLanes);
  // m's column block [c0, c0 + 16 NV) is [K][16 NV] at c0 K (every block before it is full),
  // or [Kp][64] at c0 Kp.
  const float* mb = m + c0 * (kPanels ? Kp : K);
  constexpr int64_t kRow = kPanels ? kColBlock * kLanes : NV * kLanes;
  for (int64_t k = 0; k < K; ++k) {
    __m512 wv[NV];
    for (int v = 0; v < NV; ++v) {
      wv[v] = _mm512_load_ps(mb + k * kRow + v * kLanes);
      // Held in a register: folded into each row's FMA, the vector is loaded NR times, and
      // with four rows the loads, not the FMAs, set the pace.
      asm("" : "+v"(wv[v]));
    }
    for (int n = 0; n < NR; ++n) {
      const __m512 s = _mm512_set1_ps(in[n][k]);
      for (int v = 0; v < NV; ++v) acc[n][v] = _mm512_fmadd_ps(s, wv[v], acc[n][v]);
    }
  }
  for (int n = 0; n < NR; ++n)
    for (int v = 0; v < NV; ++v) _mm512_store_ps(out[n] + c0 + v * kLanes, acc[n][v]);
}

template <int NR, bool kPanels>
RECUR_AVX512 void multiply(const float* const* init, const float* const* in, int64_t K,
                           const float* m, int64_t Gp, int64_t Kp, float* const* out) {
  int64_t c0 = 0;
  for (; c0 + kColBlock * kLanes <= Gp; c0 += kColBlock * kLanes)
    accumulate<NR, kColBlock, kPanels>(init, in, K, m, Kp, c0, out);
  switch ((Gp - c0) / kLanes) {
    case 3:
      accumulate<NR, 3, kPanels>(init, in, K, m, Kp, c0, out);
      break;
    case 2:
      accumulate<NR, 2, kPanels>(init, in, K, m, Kp, c0, out);
      break;
    case 1:
      accumulate<NR, 1, kPanels>(init, in, K, m, Kp, c0, out);
      break;
    default:
      break;
  }
}

template <bool kPanels>
void multiply_rows_in(int nr, const float* const* init, const float* const* in, int64_t K,
                      const float* m, int64_t Gp, int64_t Kp, float* const* out) {
  switch (nr) {
    case 4:
      return multiply<4, kPanels>(init, in, K, m, Gp, Kp, out);
    case 3:
      return multiply<3, kPanels>(init, in, K, m, Gp, Kp, out);
    case 2:
      return multiply<2, kPanels>(init, in, K, m, Gp, Kp, out);
    default:
      return multiply<1, kPanels>(init, in, K, m, Gp, Kp, out);
  }
}

// multiply_panels' pass: NR rows by the NV vectors of columns from c0 of one [Kp][64] block
// `mb`, bias (or zeros) first, y written under a mask past N.
template <int NR, int NV>
RECUR_AVX512 void accumulate_into(const float* a, int64_t K, const float* mb, int64_t N, int64_t c0,
                                  const float* bias, float* y) {
  __m512 acc[NR][NV];
  __mmask16 mask[NV];
  for (int v = 0; v < NV; ++v) mask[v] = lanes(N - c0 - v * kLanes);
  for (int v = 0; v < NV; ++v) {
    const __m512 b0 =
        bias ? _mm512_maskz_loadu_ps(mask[v], bias + c0 + v * kLanes) : _mm512_setzero_ps();
    for (int n = 0; n < NR; ++n) acc[n][v] = b0;
  }
  constexpr int64_t kRow = kColBlock * kLanes;
  for (int64_t k = 0; k < K; ++k) {
    __m512 wv[NV];
    for (int v = 0; v < NV; ++v) {
      wv[v] = _mm512_load_ps(mb + k * kRow + v * kLanes);
      asm("" : "+v"(wv[v]));  // as in accumulate: loaded once for the NR rows
    }
    for (int n = 0; n < NR; ++n) {
      const __m512 s = _mm512_set1_ps(a[n * K + k]);
      for (int v = 0; v < NV; ++v) acc[n][v] = _mm512_fmadd_ps(s, wv[v], acc[n][v]);
    }
  }
  for (int n = 0; n < NR; ++n)
    for (int v = 0; v < NV; ++v)
      _mm512_mask_storeu_ps(y + n * N + c0 + v * kLanes, mask[v], acc[n][v]);
}

template <int NR>
void accumulate_block(const float* a, int64_t K, const float* mb, int64_t N, int64_t c0,
                      const float* bias, float* y) {
  switch (std::min<int64_t>(kColBlock, (N - c0 + kLanes - 1) / kLanes)) {
    case 4:
      return accumulate_into<NR, 4>(a, K, mb, N, c0, bias, y);
    case 3:
      return accumulate_into<NR, 3>(a, K, mb, N, c0, bias, y);
    case 2:
      return accumulate_into<NR, 2>(a, K, mb, N, c0, bias, y);
    default:
      return accumulate_into<NR, 1>(a, K, mb, N, c0, bias, y);
  }
}

// The bias row of a PackedMatrix: [Np], zeros past N (and everywhere without a bias).
std::unique_ptr<AlignedBuffer> bias_row(int64_t N, int64_t Np, const float* bias, int64_t bias_n,
                                        float bias_scale) {
  auto out = std::make_unique<AlignedBuffer>(static_cast<size_t>(Np) * sizeof(float));
  float* row = static_cast<float*>(out->data);
  std::fill(row, row + Np, 0.0f);
  for (int64_t c = 0; bias && c < N; ++c) row[c] = bias_scale * bias[bias_n == 1 ? 0 : c];
  return out;
}

bool panels_fit(int64_t K, int64_t N) {
  constexpr int64_t kBlock = kColBlock * kLanes;
  const double padded = static_cast<double>((K + 15) / 16 * 16) *
                        static_cast<double>((N + kBlock - 1) / kBlock * kBlock);
  return padded <= 1.5 * static_cast<double>(K) * static_cast<double>(N) + 16384.0;
}

}  // namespace

void multiply_rows(int nr, const float* const* init, const float* const* in, int64_t K,
                   const float* m, int64_t Gp, float* const* out, int64_t panel_rows) {
  // oneDNN's blocks (panel_rows) are read only with AVX-512: multiply_matrix's callers check.
  if (panel_rows == 0 && !avx512_here()) return avx2::multiply_rows(nr, init, in, K, m, Gp, out);
  if (panel_rows > 0) return multiply_rows_in<true>(nr, init, in, K, m, Gp, panel_rows, out);
  return multiply_rows_in<false>(nr, init, in, K, m, Gp, K, out);
}

void multiply_row_set(int64_t rows, const float* const* init, const float* const* in, int64_t K,
                      const float* m, int64_t Gp, float* const* out, bool backward) {
  if (!avx512_here()) return avx2::multiply_row_set(rows, init, in, K, m, Gp, out, backward);
  constexpr int64_t kBlock = kColBlock * kLanes;
  std::array<const float*, kRowBlock> bi{};
  std::array<float*, kRowBlock> bo{};
  const int64_t blocks = (Gp + kBlock - 1) / kBlock;
  // Column block [c0, c0 + width) is [K][width] at c0 K; init and out rows are offset to it.
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = (backward ? blocks - 1 - b : b) * kBlock;
    const int64_t width = std::min(kBlock, Gp - c0);
    for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
      const int nr = static_cast<int>(std::min<int64_t>(kRowBlock, rows - r0));
      for (int q = 0; q < nr; ++q) {
        bi[static_cast<size_t>(q)] = init[r0 + q] + c0;
        bo[static_cast<size_t>(q)] = out[r0 + q] + c0;
      }
      multiply_rows_in<false>(nr, bi.data(), in + r0, K, m + c0 * K, width, K, bo.data());
    }
  }
}

RECUR_LOAD_PATH std::unique_ptr<AlignedBuffer> pack_columns(const float* src, int64_t K,
                                                            std::span<const int64_t> source,
                                                            int64_t row_stride, int64_t k_stride,
                                                            bool discard_source) {
  const auto Gp = static_cast<int64_t>(source.size());
  auto buf = std::make_unique<AlignedBuffer>(static_cast<size_t>(K * Gp) * sizeof(float));
  float* dst = static_cast<float*>(buf->data);
  // Rows behind the reader are discarded only where each is read once, in order.
  int64_t first = -1, last = -1;
  bool in_order = k_stride == 1 && row_stride >= K;
  for (const int64_t s : source) {
    if (s < 0) continue;
    in_order = in_order && s > last;
    if (first < 0) first = s;
    last = s;
  }
  DiscardBehind behind;
  if (discard_source && in_order && first >= 0)
    behind = DiscardBehind(src + first * row_stride, src + last * row_stride + K);
  constexpr int64_t kBlock = kColBlock * kLanes;
  // A block's columns 16 values of k at a time: the 16 rows of the block they land in (4 KiB)
  // stay in L1 while each column's source is read in order. Column by column, every value
  // landed on a line of its own (an LSTM of 2048 units took 35 ms more to load on the row
  // team than on the primitive).
  constexpr int64_t kTile = 16;
  for (int64_t c0 = 0; c0 < Gp; c0 += kBlock) {
    const int64_t width = std::min(kBlock, Gp - c0);
    float* block = dst + c0 * K;
    for (int64_t k0 = 0; k0 < K; k0 += kTile) {
      const int64_t k1 = std::min(K, k0 + kTile);
      // Padding columns are written as zeros here rather than by a fill of the whole buffer
      // first, which made all of it resident while the source still was (DiscardBehind then
      // lowered no peak).
      for (int64_t c = 0; c < width; ++c) {
        const int64_t s = source[static_cast<size_t>(c0 + c)];
        if (s < 0) {
          for (int64_t k = k0; k < k1; ++k) block[k * width + c] = 0.0f;
          continue;
        }
        const float* from = src + s * row_stride;
        for (int64_t k = k0; k < k1; ++k) block[k * width + c] = from[k * k_stride];
      }
    }
    // In order, every source row up to the block's last is read for the last time.
    for (int64_t c = width - 1; c >= 0; --c) {
      const int64_t s = source[static_cast<size_t>(c0 + c)];
      if (s < 0) continue;
      behind.read_to(src + s * row_stride + K);
      break;
    }
  }
  return buf;
}

RECUR_LOAD_PATH void unpack_columns(const float* m, int64_t K, std::span<const int64_t> source,
                                    std::span<const int64_t> row_at, int64_t k_stride, float* dst) {
  const auto Gp = static_cast<int64_t>(source.size());
  constexpr int64_t kBlock = kColBlock * kLanes;
  for (int64_t col = 0; col < Gp; ++col) {
    const int64_t s = source[static_cast<size_t>(col)];
    if (s < 0 || row_at[static_cast<size_t>(s)] < 0) continue;
    const int64_t c0 = col / kBlock * kBlock, width = std::min(kBlock, Gp - c0);
    const float* from = m + c0 * K + (col - c0);
    float* to = dst + row_at[static_cast<size_t>(s)];
    for (int64_t k = 0; k < K; ++k) to[k * k_stride] = from[k * width];
  }
}

RECUR_LOAD_PATH std::vector<int64_t> column_sources(int64_t n, int64_t count, int64_t first) {
  std::vector<int64_t> s(static_cast<size_t>(n), -1);
  for (int64_t c = 0; c < std::min(n, count); ++c) s[static_cast<size_t>(c)] = first + c;
  return s;
}

PackedMatrix pack_matrix(const float* b, int64_t K, int64_t N, bool transposed, float scale,
                         const float* bias, int64_t bias_n, float bias_scale) {
  PackedMatrix p;
  p.K = K;
  p.N = N;
  p.Np = (N + kLanes - 1) / kLanes * kLanes;
  p.m = pack_columns(b, K, column_sources(p.Np, N), transposed ? K : 1, transposed ? 1 : N);
  if (scale != 1.0f) {
    float* m = static_cast<float*>(p.m->data);
    for (int64_t i = 0; i < K * p.Np; ++i) m[i] *= scale;
  }
  p.bias = bias_row(N, p.Np, bias, bias_n, bias_scale);
  return p;
}

// Row k of B stored K x N is row k % 16 of tile (nb, k / 16) in every column block nb; rows n
// of B stored N x K are its columns, 64 of them a column block, filled one block after another.
RECUR_LOAD_PATH void pack_panels(const float* b, int64_t K, int64_t N, bool transposed, float scale,
                                 float* dst, bool discard_source) {
  constexpr int64_t kRows = 16, kCols = kColBlock * kLanes;
  const int64_t KB = (K + kRows - 1) / kRows, NB = (N + kCols - 1) / kCols;
  auto tile = [&](int64_t nb, int64_t kb) { return dst + (nb * KB + kb) * kRows * kCols; };
  DiscardBehind behind;
  if (discard_source) behind = DiscardBehind(b, b + K * N);
  if (!transposed) {
    for (int64_t k = 0; k < KB * kRows; ++k) {
      const float* row = k < K ? b + k * N : nullptr;  // null: a padding row
      for (int64_t nb = 0; nb < NB; ++nb) {
        float* out = tile(nb, k / kRows) + (k % kRows) * kCols;
        const int64_t n0 = nb * kCols, live = row ? std::min(kCols, N - n0) : 0;
        for (int64_t c = 0; c < live; ++c) out[c] = row[n0 + c] * scale;
        std::fill(out + live, out + kCols, 0.0f);
      }
      if (row) behind.read_to(row + N);
    }
    return;
  }
  for (int64_t nb = 0; nb < NB; ++nb) {
    const int64_t n0 = nb * kCols, cols = std::min(kCols, N - n0);
    for (int64_t kb = 0; kb < KB; ++kb) {
      float* out = tile(nb, kb);
      const int64_t k0 = kb * kRows, rows = std::min(kRows, K - k0);
      for (int64_t r = 0; r < kRows; ++r) {
        float* o = out + r * kCols;
        for (int64_t c = 0; c < kCols; ++c)
          o[c] = r < rows && c < cols ? b[(n0 + c) * K + k0 + r] * scale : 0.0f;
      }
    }
    behind.read_to(b + (n0 + cols) * K);
  }
}

RECUR_LOAD_PATH PackedMatrix pack_matrix_panels(const float* b, int64_t K, int64_t N,
                                                bool transposed, float scale, const float* bias,
                                                int64_t bias_n, float bias_scale) {
  if (!panels_fit(K, N)) return pack_matrix(b, K, N, transposed, scale, bias, bias_n, bias_scale);
  constexpr int64_t kBlock = kColBlock * kLanes;
  PackedMatrix p;
  p.K = K;
  p.N = N;
  p.Np = (N + kLanes - 1) / kLanes * kLanes;
  p.Kp = (K + 15) / 16 * 16;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
  p.m =
      std::make_shared<AlignedBuffer>(static_cast<size_t>(blocks * p.Kp * kBlock) * sizeof(float));
  pack_panels(b, K, N, transposed, scale, static_cast<float*>(p.m->data));
  p.bias = bias_row(N, p.Np, bias, bias_n, bias_scale);
  return p;
}

void multiply_matrix(const PackedMatrix& p, const float* a, int64_t rows, float* y,
                     float* scratch) {
  if (p.N == 0) return;  // no output; the scratch is then null
  const float* bias = static_cast<const float*>(p.bias->data);
  const float* m = static_cast<const float*>(p.m->data);
  const float* init[kRowBlock] = {bias, bias, bias, bias};
  const float* in[kRowBlock];
  float* out[kRowBlock];
  for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
    const int n = static_cast<int>(std::min<int64_t>(kRowBlock, rows - r0));
    for (int q = 0; q < n; ++q) {
      in[q] = a + (r0 + q) * p.K;
      out[q] = scratch + q * p.Np;
    }
    multiply_rows(n, init, in, p.K, m, p.Np, out, p.Kp);
    for (int q = 0; q < n; ++q)
      std::memcpy(y + (r0 + q) * p.N, out[q], static_cast<size_t>(p.N) * sizeof(float));
  }
}

void multiply_panels(const float* m, int64_t K, int64_t Kp, int64_t N, const float* a, int64_t rows,
                     const float* bias, float* y, int64_t b0, int64_t b1) {
  constexpr int64_t kBlock = kColBlock * kLanes;
  for (int64_t b = b0; b < b1; ++b) {
    const float* mb = m + b * Kp * kBlock;
    for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
      const float* ar = a + r0 * K;
      float* yr = y + r0 * N;
      switch (std::min<int64_t>(kRowBlock, rows - r0)) {
        case 4:
          accumulate_block<4>(ar, K, mb, N, b * kBlock, bias, yr);
          break;
        case 3:
          accumulate_block<3>(ar, K, mb, N, b * kBlock, bias, yr);
          break;
        case 2:
          accumulate_block<2>(ar, K, mb, N, b * kBlock, bias, yr);
          break;
        default:
          accumulate_block<1>(ar, K, mb, N, b * kBlock, bias, yr);
          break;
      }
    }
  }
}

RECUR_AVX512 void softmax_rows(const float* x, int64_t rows, int64_t d, bool log, float* y) {
  for (int64_t r = 0; r < rows; ++r, x += d, y += d) {
    __m512 mv = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __mmask16 nan = 0;
    for (int64_t j = 0; j < d; j += kLanes) {
      const __mmask16 m = lanes(d - j);
      const __m512 v = _mm512_maskz_loadu_ps(m, x + j);
      nan |= _mm512_mask_cmp_ps_mask(m, v, v, _CMP_UNORD_Q);
      mv = _mm512_mask_max_ps(mv, m, mv, v);
    }
    float mx = nan ? std::numeric_limits<float>::quiet_NaN() : _mm512_reduce_max_ps(mv);
    if (std::isinf(mx) && mx < 0) mx = 0.0f;  // all -inf: exp(x) is 0 everywhere
    const __m512 mxv = _mm512_set1_ps(mx);
    __m512 sv = _mm512_setzero_ps();
    for (int64_t j = 0; j < d; j += kLanes) {
      const __mmask16 m = lanes(d - j);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), mxv));
      sv = _mm512_add_ps(sv, _mm512_maskz_mov_ps(m, e));
      if (!log) _mm512_mask_storeu_ps(y + j, m, e);
    }
    const float sum = _mm512_reduce_add_ps(sv);
    // (x - max) - log(sum), in that order: x - (max + log(sum)) loses log(sum) next to a large
    // max.
    const __m512 k = _mm512_set1_ps(log ? std::log(sum) : 1.0f / sum);
    for (int64_t j = 0; j < d; j += kLanes) {
      const __mmask16 m = lanes(d - j);
      const __m512 v = log ? _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), mxv), k)
                           : _mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + j), k);
      _mm512_mask_storeu_ps(y + j, m, v);
    }
  }
}

RECUR_AVX512 void softmax_columns(const float* x, int64_t outer, int64_t d, int64_t stride,
                                  int64_t columns, bool log, float* y) {
  const __m512 ninf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t block = d * stride;
  for (int64_t o = 0; o < outer; ++o, x += block, y += block) {
    for (int64_t i = 0; i < columns; i += kLanes) {
      const __mmask16 m = lanes(columns - i);
      __m512 mv = ninf;
      __mmask16 nan = 0;
      for (int64_t j = 0; j < d; ++j) {
        const __m512 v = _mm512_maskz_loadu_ps(m, x + j * stride + i);
        nan |= _mm512_mask_cmp_ps_mask(m, v, v, _CMP_UNORD_Q);
        mv = _mm512_max_ps(mv, v);
      }
      // Per column as softmax_rows per row: a NaN makes the column NaN, all -inf takes 0.
      mv = _mm512_mask_mov_ps(mv, _mm512_cmp_ps_mask(mv, ninf, _CMP_EQ_OQ), _mm512_setzero_ps());
      mv = _mm512_mask_mov_ps(mv, nan, _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
      __m512 sv = _mm512_setzero_ps();
      for (int64_t j = 0; j < d; ++j) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j * stride + i), mv));
        sv = _mm512_add_ps(sv, e);
        if (!log) _mm512_mask_storeu_ps(y + j * stride + i, m, e);
      }
      __m512 k;
      if (log) {
        alignas(64) float s[kLanes];
        _mm512_store_ps(s, sv);
        for (float& v : s) v = std::log(v);
        k = _mm512_load_ps(s);
      } else {
        k = _mm512_div_ps(_mm512_set1_ps(1.0f), sv);
      }
      for (int64_t j = 0; j < d; ++j) {
        float* yj = y + j * stride + i;
        const __m512 v =
            log ? _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j * stride + i), mv), k)
                : _mm512_mul_ps(_mm512_maskz_loadu_ps(m, yj), k);
        _mm512_mask_storeu_ps(yj, m, v);
      }
    }
  }
}

RECUR_AVX512 Magnitudes magnitudes(const float* x, int64_t n) {
  const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  __m512 mx = _mm512_setzero_ps();
  __mmask16 bad = 0;
  Magnitudes out;
  // Sums of float blocks of 1024 values go into a double: a float sum of millions of values
  // would drift.
  constexpr int64_t kBlock = 1024;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    __m512 sv = _mm512_setzero_ps();
    for (int64_t j = b; j < e; j += kLanes) {
      const __mmask16 m = lanes(e - j);
      const __m512 v = _mm512_abs_ps(_mm512_maskz_loadu_ps(m, x + j));
      bad |= _mm512_mask_cmp_ps_mask(m, v, inf, _CMP_NLT_UQ);  // NaN or infinite
      mx = _mm512_max_ps(mx, v);
      sv = _mm512_add_ps(sv, v);
    }
    out.sum += static_cast<double>(_mm512_reduce_add_ps(sv));
  }
  out.finite = bad == 0;
  out.max = _mm512_reduce_max_ps(mx);
  return out;
}

RECUR_AVX512 bool all_finite(const float* x, int64_t n) {
  const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  __mmask16 bad = 0;
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lanes(n - j);
    const __m512 v = _mm512_abs_ps(_mm512_maskz_loadu_ps(m, x + j));
    bad |= _mm512_mask_cmp_ps_mask(m, v, inf, _CMP_NLT_UQ);  // NaN or infinite
    if ((j & 4095) == 0 && bad) return false;
  }
  return bad == 0;
}

RECUR_AVX512 void unary(Unary f, const float* x, int64_t n, float* y, float alpha, float beta) {
  const __m512 a = _mm512_set1_ps(alpha);
  const __m512 b = _mm512_set1_ps(beta);
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lanes(n - j);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + j);
    __m512 r;
    switch (f) {
      case Unary::kRelu:
        r = _mm512_max_ps(_mm512_setzero_ps(), v);  // max returns its second operand on a NaN
        break;
      case Unary::kLeakyRelu:
        r = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, a);
        break;
      case Unary::kTanh:
        r = tanh16(v);
        break;
      case Unary::kSigmoid:
        r = sigmoid16(v);
        break;
      case Unary::kErf:
        r = erf16(v);
        break;
      case Unary::kHardSwish:
        r = hardswish16(v);
        break;
      case Unary::kClip:
        // max and min return their second operand on a NaN: the NaN goes through.
        r = _mm512_min_ps(b, _mm512_max_ps(a, v));
        break;
      case Unary::kHardSigmoid:
        // max and min return their second operand on a NaN: the NaN goes through.
        r = _mm512_min_ps(_mm512_set1_ps(1.0f),
                          _mm512_max_ps(_mm512_setzero_ps(), _mm512_fmadd_ps(a, v, b)));
        break;
      case Unary::kNeg:  // the sign bit flipped: -0 for +0, as -x gives
        r = _mm512_castsi512_ps(
            _mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN)));
        break;
      case Unary::kAbs:
        r = _mm512_abs_ps(v);
        break;
      case Unary::kSin:
      case Unary::kCos: {
        const bool is_cos = f == Unary::kCos;
        __mmask16 big = 0;
        r = sincos16(v, is_cos ? 1 : 0, &big);
        big &= m;
        if (big) {  // past the reduction's range, or infinite: the C library, lane by lane
          alignas(64) float lanes_in[kLanes], lanes_out[kLanes];
          _mm512_store_ps(lanes_in, v);
          _mm512_store_ps(lanes_out, r);
          for (int l = 0; l < kLanes; ++l) {
            if (big & (1u << l))
              lanes_out[l] = is_cos ? std::cos(lanes_in[l]) : std::sin(lanes_in[l]);
          }
          r = _mm512_load_ps(lanes_out);
        }
        break;
      }
      default:
        r = _mm512_sqrt_ps(v);
        break;
    }
    _mm512_mask_storeu_ps(y + j, m, r);
  }
}

}  // namespace recur::onednn::avx512
