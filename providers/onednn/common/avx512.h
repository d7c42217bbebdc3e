// float32 building blocks on AVX-512 for recur's own small kernels (rnn/small_cell.h, and the
// small paths of MatMul, Gemm, Softmax and the element-wise ops): vector exp, sigmoid and tanh,
// and a multiply of up to four rows by a matrix packed at load. oneDNN's primitives cost a
// microsecond or more per call and a few MiB of code and JIT buffers per process; for the
// tensors of a few thousand elements around small RNNs, these loops are faster and touch none
// of it. Every function here needs AVX-512F: callers check have_avx512() once, at load.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "providers/onednn/common/dnnl_util.h"

#define RECUR_AVX512 __attribute__((target("avx512f")))

// GCC 12 takes the _mm512_undefined_ps() that the unmasked AVX-512 intrinsics pass through for
// an uninitialized read: "may be" where they are inlined into a loop, and "is used" where the
// value is a vector the intrinsic itself declares (_mm512_reduce_max_ps, the 128-bit shuffles).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace recur::onednn::avx512 {

bool have_avx512();
// The same, asked once: the small-cell kernels choose between their AVX-512 and AVX2 loops at
// every row and step, where a call to have_avx512 cost bigru_classifier 8% of a run on one
// thread.
inline bool avx512_here() {
  static const bool yes = have_avx512();
  return yes;
}

inline constexpr int kRowBlock = 4;  // rows multiply_rows takes at once
inline constexpr int kColBlock = 4;  // vectors of columns per pass: 4x4 accumulators

inline constexpr int64_t kLanes = 16;
// The mask of the first min(16, n) lanes.
RECUR_AVX512 inline __mmask16 lanes(int64_t n) {
  return n >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

// e^x to about 2 ulp for x up to 88, and e^88 above (so that the callers below never divide by
// infinity): x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial for e^r, and 2^n applied by
// scalef, which goes to 0 by itself. The clamp lets a NaN through (max and min return their
// second operand on a NaN).
RECUR_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(88.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

// 1/x from the 14-bit estimate and one Newton step, to about 1 ulp, for finite x >= 1 (what the
// callers pass): vdivps costs 16 cycles a vector, and the cell divides five times per element.
RECUR_AVX512 inline __m512 recip16(__m512 x) {
  const __m512 r = _mm512_rcp14_ps(x);
  return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(x, r, _mm512_set1_ps(1.0f)), r);
}

// exp16 saturates at e^88, so -inf would give 6e-39, not 0: x * sigmoid(x) at -inf (SiLU
// written as two nodes) must be NaN, as the reference's 0 makes it.
RECUR_AVX512 inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 s = recip16(_mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
  const __mmask16 minus_inf = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ);
  return _mm512_mask_blend_ps(minus_inf, s, _mm512_setzero_ps());
}

// tanh as (1 - e^-2|x|) / (1 + e^-2|x|) with x's sign; below |x| = 1/16, where that loses
// relative precision, its odd Taylor series to x^7.
RECUR_AVX512 inline __m512 tanh16(__m512 x) {
  const __m512 ax = _mm512_abs_ps(x);
  const __m512 e = exp16(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 big = _mm512_mul_ps(_mm512_sub_ps(one, e), recip16(_mm512_add_ps(one, e)));
  const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  big = _mm512_mask_sub_ps(big, neg, _mm512_setzero_ps(), big);
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 s = _mm512_set1_ps(-17.0f / 315.0f);
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(2.0f / 15.0f));
  s = _mm512_fmadd_ps(s, x2, _mm512_set1_ps(-1.0f / 3.0f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(s, x2), x, x);
  const __mmask16 tiny = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.0625f), _CMP_LT_OQ);
  // A zero as it came: the series' last fma gives +0 for -0 (tanh(-0) is -0).
  const __mmask16 zero = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ);
  return _mm512_mask_mov_ps(_mm512_mask_blend_ps(tiny, big, small), zero, x);
}

// HardSwish: x max(0, min(1, x / 6 + 1/2)); max and min return their second operand on a NaN,
// so a NaN goes through, as in the reference.
RECUR_AVX512 inline __m512 hardswish16(__m512 x) {
  const __m512 g = _mm512_fmadd_ps(_mm512_set1_ps(1.0f / 6.0f), x, _mm512_set1_ps(0.5f));
  return _mm512_mul_ps(x,
                       _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), g)));
}

// erf(x) as x P(x^2) / Q(x^2) on |x| <= 4 (erf(4) rounds to 1 in float32) with x's sign: P of
// degree 6 and Q of degree 5, fitted for this code (iteratively reweighted least squares on the
// relative error of erf over [0, 4], in double): within 4e-9 of erf in double, about 3.5e-7 of
// it (a few float32 steps near 1) evaluated in float32. A NaN stays NaN.
RECUR_AVX512 inline __m512 erf16(__m512 x) {
  const __m512 a = _mm512_min_ps(_mm512_abs_ps(x), _mm512_set1_ps(4.0f));
  const __m512 t = _mm512_mul_ps(a, a);
  __m512 p = _mm512_set1_ps(-1.317345433e-08f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(4.680582606e-06f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(3.794218355e-04f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(3.846890759e-03f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(5.430596322e-02f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.851451993e-01f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.128379226e+00f));
  __m512 q = _mm512_set1_ps(6.307307194e-05f);
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.306779915e-03f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.545588765e-02f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.139315665e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(4.974140823e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.0f));
  const __m512 r = _mm512_min_ps(_mm512_div_ps(_mm512_mul_ps(a, p), q), _mm512_set1_ps(1.0f));
  // x's sign bit on r; a NaN (min returned 4 for it) back as it came.
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  const __m512 signed_r = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(r), sign));
  return _mm512_mask_mov_ps(signed_r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

// sin(x) (cosine: phase 1) for |x| up to 8192: x = k pi/2 + r with |r| <= pi/4, pi/2 in three
// parts (Cody and Waite) so that k pi/2 is subtracted almost exactly, then the Taylor series
// of sin r to r^9 or cos r to r^10 (truncation under 2e-9 on that interval) picked by k's
// quadrant. `big` reports the lanes beyond 8192 or infinite, which callers compute one by one.
RECUR_AVX512 inline __m512 sincos16(__m512 x, int phase, __mmask16* big) {
  const __m512 ax = _mm512_abs_ps(x);
  *big = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(8192.0f), _CMP_GT_OQ);
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.636619772367581343f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.5703125f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(4.837512969970703125e-4f), r);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(7.549789954891882e-8f), r);
  const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(phase));
  const __m512 r2 = _mm512_mul_ps(r, r);
  // sin r = r (1 - r^2/3! (1 - r^2/(4*5) (1 - r^2/(6*7) (1 - r^2/(8*9))))), likewise cos r.
  __m512 s = _mm512_fnmadd_ps(r2, _mm512_set1_ps(1.0f / 72.0f), _mm512_set1_ps(1.0f));
  s = _mm512_fnmadd_ps(_mm512_mul_ps(r2, _mm512_set1_ps(1.0f / 42.0f)), s, _mm512_set1_ps(1.0f));
  s = _mm512_fnmadd_ps(_mm512_mul_ps(r2, _mm512_set1_ps(1.0f / 20.0f)), s, _mm512_set1_ps(1.0f));
  s = _mm512_fnmadd_ps(_mm512_mul_ps(r2, _mm512_set1_ps(1.0f / 6.0f)), s, _mm512_set1_ps(1.0f));
  s = _mm512_mul_ps(s, r);
  __m512 c = _mm512_fnmadd_ps(r2, _mm512_set1_ps(1.0f / 90.0f), _mm512_set1_ps(1.0f));
  c = _mm512_fnmadd_ps(_mm512_mul_ps(r2, _mm512_set1_ps(1.0f / 56.0f)), c, _mm512_set1_ps(1.0f));
  c = _mm512_fnmadd_ps(_mm512_mul_ps(r2, _mm512_set1_ps(1.0f / 30.0f)), c, _mm512_set1_ps(1.0f));
  c = _mm512_fnmadd_ps(_mm512_mul_ps(r2, _mm512_set1_ps(1.0f / 12.0f)), c, _mm512_set1_ps(1.0f));
  c = _mm512_fnmadd_ps(_mm512_mul_ps(r2, _mm512_set1_ps(0.5f)), c, _mm512_set1_ps(1.0f));
  // Quadrant 0: sin r; 1: cos r; 2: -sin r; 3: -cos r.
  const __mmask16 odd = _mm512_test_epi32_mask(q, _mm512_set1_epi32(1));
  const __mmask16 neg = _mm512_test_epi32_mask(q, _mm512_set1_epi32(2));
  const __m512 v = _mm512_mask_blend_ps(odd, s, c);
  const __m512 y = _mm512_mask_sub_ps(v, neg, _mm512_setzero_ps(), v);
  // sin(-0) is -0; the reduction's fnmadd gives r = +0 for it.
  if (phase != 0) return y;
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), x);
}

// out[n] = init[n] + in[n].m for nr <= kRowBlock rows: m is [K][Gp] packed by pack_columns,
// or with `panel_rows` (Kp) in oneDNN's blocks (pack_matrix_panels); init and out rows are Gp
// wide and 64-byte aligned.
void multiply_rows(int nr, const float* const* init, const float* const* in, int64_t K,
                   const float* m, int64_t Gp, float* const* out, int64_t panel_rows = 0);

// multiply_rows for `rows` rows, at most kRowSet (pointer arrays of that length): m is [K][Gp]
// packed by pack_columns. Each column block of m is taken for every row before the next, so
// that it is read from memory once for the set rather than once for every four rows (X.W of a
// block of steps by a W of several MiB). `backward` takes the column blocks last to first. Same
// bits as multiply_rows either way (each column's sum runs over k in the same order).
inline constexpr int64_t kRowSet = 128;
void multiply_row_set(int64_t rows, const float* const* init, const float* const* in, int64_t K,
                      const float* m, int64_t Gp, float* const* out, bool backward = false);

// A matrix as [K][Gp] for multiply_rows, Gp = source.size(): output column c takes source row
// s = source[c] (zeros where s < 0), whose element k is at src[s * row_stride + k * k_stride]
// (an ONNX RNN weight [G][K]: row_stride K, k_stride 1; a MatMul B [K][N]: row_stride 1,
// k_stride N). Stored in column blocks of 64, each [K][width] and contiguous, so that a pass
// over one block streams contiguous memory. With discard_source, the source rows are read for
// the last time, and where they are contiguous (k_stride 1) and taken in increasing order,
// their pages go back to the kernel as they are read (discard_pages): only for memory the
// caller frees next and no one else reads.
std::unique_ptr<AlignedBuffer> pack_columns(const float* src, int64_t K,
                                            std::span<const int64_t> source, int64_t row_stride,
                                            int64_t k_stride, bool discard_source = false);

// The inverse of pack_columns, to a layout of the caller's: element k of each source row s >= 0
// of `source` goes from `m` to dst[row_at[s] + k * k_stride] (none where row_at[s] < 0).
void unpack_columns(const float* m, int64_t K, std::span<const int64_t> source,
                    std::span<const int64_t> row_at, int64_t k_stride, float* dst);

// Sources for pack_columns of n columns: column c takes row first + c for c < count, and the
// columns after are zero (a block of gates padded to whole vectors).
std::vector<int64_t> column_sources(int64_t n, int64_t count, int64_t first = 0);

// The constant right operand of a row-by-matrix product (MatMul's B, Gemm's B), packed at load
// with its scale and a bias row for every output row.
struct PackedMatrix {
  int64_t K = 0, N = 0, Np = 0;  // Np: N rounded up to whole vectors
  // 0 where m is pack_columns' [K][Np]; else m is in oneDNN's matmul layout for B (BA16a64b):
  // column blocks of 64, each [Kp][64] and contiguous, Kp = K rounded up to 16, padded with
  // zeros. The loop reads either; oneDNN's brgemm matmul reads the second as it is, so one
  // copy of B serves both (pack_matrix_panels).
  int64_t Kp = 0;
  std::shared_ptr<AlignedBuffer> m;     // scaled
  std::unique_ptr<AlignedBuffer> bias;  // [Np]: zeros without one
};

// B [K][N] (or [N][K] when `transposed`) times `scale`; bias: null, one value (bias_n 1) or N.
PackedMatrix pack_matrix(const float* b, int64_t K, int64_t N, bool transposed, float scale,
                         const float* bias, int64_t bias_n, float bias_scale);
// B (K x N values, stored K x N row-major, or N x K when `transposed`) times `scale` into
// oneDNN's layout for it, BA16a64b: column blocks of 64, each [Kp][64] in tiles of 16 rows, Kp
// = K rounded up to 16, zeros in the padding; dst holds ceil(N / 64) * Kp * 64 floats. B is
// read once from front to back and the tiles written as its rows come; with discard_source
// (B read for the last time: its owner frees it next, and no one else reads it), its pages go
// back to the kernel behind the reader (DiscardBehind), so that B's resident pages and the
// packed ones sum to about one copy. One product a value: oneDNN's reorder's values.
void pack_panels(const float* b, int64_t K, int64_t N, bool transposed, float scale, float* dst,
                 bool discard_source = false);
// The same in oneDNN's layout for B (PackedMatrix::Kp > 0) where that pads B by at most half
// again (plus 64 KiB), else as pack_matrix (Kp = 0): a few columns padded to blocks of 64
// (B [4096, 5] to [4096, 64]) would multiply its size and the loop's reads.
PackedMatrix pack_matrix_panels(const float* b, int64_t K, int64_t N, bool transposed, float scale,
                                const float* bias, int64_t bias_n, float bias_scale);

// y[r] = a[r].B + bias for `rows` rows of K (a) and N (y) floats; scratch: 4 Np floats,
// 64-byte aligned.
void multiply_matrix(const PackedMatrix& p, const float* a, int64_t rows, float* y, float* scratch);

// y[r] = a[r].B + bias over the column blocks [b0, b1) of a B in oneDNN's layout for it
// (pack_panels: column blocks of 64, each [Kp][64]), for `rows` rows of K (a) and N (y) floats;
// bias: N values or null. Each block is read from memory once for every row (four rows a pass,
// the block in cache for the passes after the first), and the sums go straight to y: no scratch,
// so that column blocks can be split among threads. The same sums in the same order as
// multiply_matrix over a PackedMatrix of that layout with that bias.
void multiply_panels(const float* m, int64_t K, int64_t Kp, int64_t N, const float* a, int64_t rows,
                     const float* bias, float* y, int64_t b0, int64_t b1);

// Softmax (or, with `log`, LogSoftmax) of each of `rows` rows of d floats, as the reference
// provider defines it for NaN and infinities: a NaN anywhere makes the row NaN, a row of -inf
// gives NaN, +inf gives NaN.
void softmax_rows(const float* x, int64_t rows, int64_t d, bool log, float* y);
// The same along the middle axis of `outer` blocks of d rows of `stride` floats, for the first
// `columns` of each row: each column of a block is one such row, 16 columns to a vector (an
// attention pooling's weights over time, [N, T, heads] along T; channels, [N, C, H, W] along C).
void softmax_columns(const float* x, int64_t outer, int64_t d, int64_t stride, int64_t columns,
                     bool log, float* y);

// The largest magnitude among n floats and the sum of their magnitudes (in double); `finite`
// false where any is NaN or infinite (the two others are then meaningless).
struct Magnitudes {
  float max = 0.0f;
  double sum = 0.0;
  bool finite = true;
};
Magnitudes magnitudes(const float* x, int64_t n);
// Whether none of n floats is NaN or infinite: one compare a vector, no sums.
bool all_finite(const float* x, int64_t n);

// y = f(x) for n floats: Relu (a NaN stays NaN), LeakyRelu (x below 0 times alpha, as the
// reference computes it: -inf times 0 is NaN), Tanh, Sigmoid, Sqrt, Erf, Sin, Cos.
// kLeakyRelu: alpha the slope below 0; kHardSigmoid: max(0, min(1, alpha x + beta)), NaN kept;
// kHardSwish: x max(0, min(1, x / 6 + 1/2)); kClip: min(beta, max(alpha, x)), NaN kept (alpha
// <= beta).
enum class Unary {
  kRelu,
  kLeakyRelu,
  kTanh,
  kSigmoid,
  kSqrt,
  kErf,
  kSin,
  kCos,
  kHardSigmoid,
  kHardSwish,
  kClip,
  kNeg,
  kAbs
};
void unary(Unary f, const float* x, int64_t n, float* y, float alpha = 0.0f, float beta = 0.0f);

}  // namespace recur::onednn::avx512
