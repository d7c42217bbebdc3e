// The row-by-matrix products of the small-cell RNN kernels (avx512.h's multiply_rows and
// multiply_row_set) and their vector exp, sigmoid and tanh, for processors with AVX2 and FMA and
// without AVX-512 (or with it capped off by ONEDNN_MAX_CPU_ISA). Without them those kernels ran
// only with AVX-512, and every LSTM, GRU and RNN went to oneDNN's primitive, which pays about
// 1.5 us a time step whatever the cell's size.
//
// The layouts are avx512.h's (pack_columns: column blocks of 64, each [K][width] and
// contiguous), so the packing at load is shared; each column's sum starts from its init value
// and runs over k in order, one FMA a term, as the AVX-512 loops do: the products give the same
// bits on either. The element functions may differ in the last bits (a 12-bit reciprocal
// estimate here, 14-bit there, each refined once).
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#define RECUR_AVX2 __attribute__((target("avx2,fma")))

namespace recur::onednn::avx2 {

// multiply_rows (avx512.h) for nr <= 4 rows over pack_columns' layout: out[n] = init[n] +
// in[n].m, m [K][Gp], Gp a multiple of 16.
void multiply_rows(int nr, const float* const* init, const float* const* in, int64_t K,
                   const float* m, int64_t Gp, float* const* out);
// multiply_row_set (avx512.h): each column block of m for every row before the next.
void multiply_row_set(int64_t rows, const float* const* init, const float* const* in, int64_t K,
                      const float* m, int64_t Gp, float* const* out, bool backward);

// The mask of the first min(8, n) lanes, for maskload and maskstore.
RECUR_AVX2 inline __m256i lanes8(int64_t n) {
  const int k = n >= 8 ? 8 : static_cast<int>(n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// e^x as avx512.h's exp16 (x = n ln2 + r, a degree-6 polynomial for e^r), x clamped to [-87,
// 88] so that 2^n is a normal float built in the exponent bits: e^-87 is 1.6e-38, which the
// callers below add to 1. A NaN goes through the clamp (max and min return their second
// operand on a NaN).
RECUR_AVX2 inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(88.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // n in [-126, 127] for x in [-87, 88]: 2^n is (n + 127) in the exponent field.
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// 1/x from the 12-bit estimate and one Newton step, for finite x >= 1 (what the callers pass).
RECUR_AVX2 inline __m256 recip8(__m256 x) {
  const __m256 r = _mm256_rcp_ps(x);
  return _mm256_fmadd_ps(r, _mm256_fnmadd_ps(x, r, _mm256_set1_ps(1.0f)), r);
}

// sigmoid as avx512.h's sigmoid16: 0 at -inf (exp8 saturates).
RECUR_AVX2 inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 s = recip8(_mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
  const __m256 minus_inf = _mm256_cmp_ps(x, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ);
  return _mm256_andnot_ps(minus_inf, s);
}

// tanh as avx512.h's tanh16: (1 - e^-2|x|) / (1 + e^-2|x|) with x's sign, the odd Taylor
// series below |x| = 1/16, and a zero as it came (tanh(-0) is -0).
RECUR_AVX2 inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 ax = _mm256_andnot_ps(sign, x);
  const __m256 e = exp8(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 big = _mm256_or_ps(
      _mm256_mul_ps(_mm256_sub_ps(one, e), recip8(_mm256_add_ps(one, e))), _mm256_and_ps(sign, x));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 s = _mm256_set1_ps(-17.0f / 315.0f);
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(2.0f / 15.0f));
  s = _mm256_fmadd_ps(s, x2, _mm256_set1_ps(-1.0f / 3.0f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(s, x2), x, x);
  const __m256 tiny = _mm256_cmp_ps(ax, _mm256_set1_ps(0.0625f), _CMP_LT_OQ);
  const __m256 zero = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ);
  return _mm256_blendv_ps(_mm256_blendv_ps(big, small, tiny), x, zero);
}

}  // namespace recur::onednn::avx2
