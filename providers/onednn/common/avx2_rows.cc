#include "providers/onednn/common/avx2_rows.h"

#include <algorithm>
#include <array>

namespace recur::onednn::avx2 {

namespace {

constexpr int64_t kBlock = 64;  // pack_columns' column block
constexpr int kRows = 4;

// Rows [0, NR) by the 8 NV columns at mb + c (block row stride w), each sum from init[n] + c0
// + c. NR NV = 8 or fewer accumulators: one row takes a whole block of 64 columns at once, since
// with fewer sums each step would wait for the FMA before it (4 cycles), and a pass over 16
// columns would read only a quarter of each 256-byte row of the block.
template <int NR, int NV, bool kFetch = false>
RECUR_AVX2 void pass(const float* const* init, const float* const* in, int64_t k0, int64_t k1,
                     const float* mb, int64_t w, int64_t c, int64_t c0, float* const* out) {
  // Unrolled in full, so that the arrays become registers (GCC 12 otherwise keeps them in
  // memory, with a load and a store around every FMA).
  __m256 acc[NR][NV];
#pragma GCC unroll 4
  for (int n = 0; n < NR; ++n)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[n][v] = _mm256_loadu_ps(init[n] + c0 + c + 8 * v);
  const float* b = mb + k0 * w + c;
  for (int64_t k = k0; k < k1; ++k, b += w) {
    if constexpr (kFetch) {
      // The whole row of the block 16 steps ahead, for the passes after this one.
      const char* ahead = reinterpret_cast<const char*>(b - c + 16 * w);
      for (int64_t at = 0; at < w * 4; at += 64) _mm_prefetch(ahead + at, _MM_HINT_T0);
    }
    __m256 bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 4
    for (int n = 0; n < NR; ++n) {
      const __m256 s = _mm256_broadcast_ss(in[n] + k);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[n][v] = _mm256_fmadd_ps(s, bv[v], acc[n][v]);
    }
  }
#pragma GCC unroll 4
  for (int n = 0; n < NR; ++n)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) _mm256_storeu_ps(out[n] + c0 + c + 8 * v, acc[n][v]);
}

// A block of w columns (a multiple of 16) for NR rows, in chunks of kChunk steps of k: the
// passes over narrower columns then read each chunk's rows of the block while they are in
// cache, where whole passes over K swept the block once per pass, a quarter of each row at a
// time, and the first pass of a chunk fetches the whole rows ahead. A standalone loop on the Zen
// 4, 4 rows: by [256][1024] (in L2) 37.7 us whole, 28.6 chunked; by [1024][4096] 1.2-2.4 ms
// whole, 2.3-2.6 chunked without the fetch, 1.1-1.2 with it (one row, a pass over all 64
// columns: 0.28-0.34). A chunk's sums go through out to the next one: the same sums in the
// same order.
template <int NR>
void columns(const float* const* init, const float* const* in, int64_t K, const float* mb,
             int64_t w, int64_t c0, float* const* out) {
  constexpr int kWide = 8 / NR >= 8 ? 8 : 8 / NR >= 4 ? 4 : 2;  // vectors of 8 a pass
  constexpr int64_t kChunk = 128;                               // 32 KiB of a block of 64 columns
  // Once at least: with K = 0, out is init.
  for (int64_t k0 = 0; k0 == 0 || k0 < K; k0 += kChunk) {
    const int64_t k1 = std::min(K, k0 + kChunk);
    const float* const* from = k0 == 0 ? init : const_cast<const float* const*>(out);
    int64_t c = 0;
    if (8 * kWide < w) {  // passes narrower than the block: the first fetches its rows ahead
      pass<NR, kWide, true>(from, in, k0, k1, mb, w, c, c0, out);
      c += 8 * kWide;
    }
    for (; c + 8 * kWide <= w; c += 8 * kWide) pass<NR, kWide>(from, in, k0, k1, mb, w, c, c0, out);
    for (; c + 32 <= w; c += 32) pass<NR, 4>(from, in, k0, k1, mb, w, c, c0, out);
    for (; c < w; c += 16) pass<NR, 2>(from, in, k0, k1, mb, w, c, c0, out);
  }
}

// Column block [c0, c0 + w) of m (at m + c0 K) for nr <= 4 rows.
void block(int nr, const float* const* init, const float* const* in, int64_t K, const float* m,
           int64_t c0, int64_t w, float* const* out) {
  const float* mb = m + c0 * K;
  switch (nr) {
    case 1:
      return columns<1>(init, in, K, mb, w, c0, out);
    case 2:
      return columns<2>(init, in, K, mb, w, c0, out);
    case 3:
      return columns<3>(init, in, K, mb, w, c0, out);
    default:
      return columns<4>(init, in, K, mb, w, c0, out);
  }
}

}  // namespace

void multiply_rows(int nr, const float* const* init, const float* const* in, int64_t K,
                   const float* m, int64_t Gp, float* const* out) {
  for (int64_t c0 = 0; c0 < Gp; c0 += kBlock)
    block(nr, init, in, K, m, c0, std::min(kBlock, Gp - c0), out);
}

void multiply_row_set(int64_t rows, const float* const* init, const float* const* in, int64_t K,
                      const float* m, int64_t Gp, float* const* out, bool backward) {
  const int64_t blocks = (Gp + kBlock - 1) / kBlock;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = (backward ? blocks - 1 - b : b) * kBlock;
    const int64_t w = std::min(kBlock, Gp - c0);
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      const int nr = static_cast<int>(std::min<int64_t>(kRows, rows - r0));
      block(nr, init + r0, in + r0, K, m, c0, w, out + r0);
    }
  }
}

}  // namespace recur::onednn::avx2
