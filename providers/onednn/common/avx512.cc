#include "providers/onednn/common/avx512.h"

#include <algorithm>

namespace recur::onednn::avx512 {

bool have_avx512() { return __builtin_cpu_supports("avx512f"); }

namespace {

// out[n] = init[n] + in[n].m over the columns [c0, c0 + 16 NV), for NR rows: m is [K][Gp] in
// column blocks of 64 (pack_blocked), each of its vectors loaded once for the NR rows.
template <int NR, int NV>
RECUR_AVX512 void accumulate(const float* const* init, const float* const* in, int64_t K,
                             const float* m, int64_t Gp, int64_t c0, float* const* out) {
  __m512 acc[NR][NV];
  for (int n = 0; n < NR; ++n)
    for (int v = 0; v < NV; ++v) acc[n][v] = _mm512_load_ps(init[n] + c0 + v * kLanes);
  // m's column block [c0, c0 + 16 NV) is [K][16 NV] at c0 K (every block before it is full).
  const float* mb = m + c0 * K;
  for (int64_t k = 0; k < K; ++k) {
    __m512 wv[NV];
    for (int v = 0; v < NV; ++v) {
      wv[v] = _mm512_load_ps(mb + k * NV * kLanes + v * kLanes);
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

template <int NR>
RECUR_AVX512 void multiply(const float* const* init, const float* const* in, int64_t K,
                           const float* m, int64_t Gp, float* const* out) {
  int64_t c0 = 0;
  for (; c0 + kColBlock * kLanes <= Gp; c0 += kColBlock * kLanes)
    accumulate<NR, kColBlock>(init, in, K, m, Gp, c0, out);
  switch ((Gp - c0) / kLanes) {
    case 3:
      accumulate<NR, 3>(init, in, K, m, Gp, c0, out);
      break;
    case 2:
      accumulate<NR, 2>(init, in, K, m, Gp, c0, out);
      break;
    case 1:
      accumulate<NR, 1>(init, in, K, m, Gp, c0, out);
      break;
    default:
      break;
  }
}

}  // namespace

void multiply_rows(int nr, const float* const* init, const float* const* in, int64_t K,
                   const float* m, int64_t Gp, float* const* out) {
  switch (nr) {
    case 4:
      return multiply<4>(init, in, K, m, Gp, out);
    case 3:
      return multiply<3>(init, in, K, m, Gp, out);
    case 2:
      return multiply<2>(init, in, K, m, Gp, out);
    default:
      return multiply<1>(init, in, K, m, Gp, out);
  }
}

std::unique_ptr<AlignedBuffer> pack_columns(const float* src, int64_t K, int64_t Gp,
                                            const std::function<int64_t(int64_t)>& source,
                                            int64_t row_stride, int64_t k_stride) {
  auto buf = std::make_unique<AlignedBuffer>(static_cast<size_t>(K * Gp) * sizeof(float));
  float* dst = static_cast<float*>(buf->data);
  std::fill(dst, dst + K * Gp, 0.0f);
  constexpr int64_t kBlock = kColBlock * kLanes;
  for (int64_t col = 0; col < Gp; ++col) {
    const int64_t s = source(col);
    if (s < 0) continue;
    const int64_t c0 = col / kBlock * kBlock, width = std::min(kBlock, Gp - c0);
    for (int64_t k = 0; k < K; ++k)
      dst[c0 * K + k * width + (col - c0)] = src[s * row_stride + k * k_stride];
  }
  return buf;
}

}  // namespace recur::onednn::avx512
