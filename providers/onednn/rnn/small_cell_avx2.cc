// The small-cell kernels' cell updates (small_cell.h) for processors with AVX2 and FMA and
// without AVX-512: as small_lstm.cc's, small_gru.cc's and small_rnn.cc's, 8 lanes a vector,
// a row's last lanes under a mask.
#include "providers/onednn/common/avx2_rows.h"
#include "providers/onednn/rnn/small_cell.h"

namespace recur::onednn::small {

namespace {

using avx2::lanes8;

RECUR_AVX2 inline __m256 load8(const float* p, __m256i m) { return _mm256_maskload_ps(p, m); }
RECUR_AVX2 inline void store8(float* p, __m256i m, __m256 v) { _mm256_maskstore_ps(p, m, v); }

}  // namespace

RECUR_AVX2 void lstm_cell_update_avx2(const float* g, int64_t H, const float* p, bool input_forget,
                                      float* c, float* h) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t j = 0; j < H; j += 8) {
    const __m256i m = lanes8(H - j);
    __m256 gi = load8(g + j, m);
    __m256 go = load8(g + H + j, m);
    __m256 gf = load8(g + 2 * H + j, m);
    const __m256 gc = load8(g + 3 * H + j, m);
    const __m256 cp = load8(c + j, m);
    if (p) gi = _mm256_fmadd_ps(load8(p + j, m), cp, gi);
    const __m256 i = avx2::sigmoid8(gi);
    __m256 f;
    if (input_forget) {
      f = _mm256_sub_ps(one, i);
    } else {
      if (p) gf = _mm256_fmadd_ps(load8(p + 2 * H + j, m), cp, gf);
      f = avx2::sigmoid8(gf);
    }
    const __m256 cn = _mm256_fmadd_ps(f, cp, _mm256_mul_ps(i, avx2::tanh8(gc)));
    if (p) go = _mm256_fmadd_ps(load8(p + H + j, m), cn, go);
    store8(c + j, m, cn);
    store8(h + j, m, _mm256_mul_ps(avx2::sigmoid8(go), avx2::tanh8(cn)));
  }
}

RECUR_AVX2 void sigmoid_rows_avx2(float* g, int64_t n) {
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i m = lanes8(n - j);
    store8(g + j, m, avx2::sigmoid8(load8(g + j, m)));
  }
}

RECUR_AVX2 void scale_rows_avx2(const float* r, const float* h, int64_t n, float* out) {
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i m = lanes8(n - j);
    store8(out + j, m, _mm256_mul_ps(load8(r + j, m), load8(h + j, m)));
  }
}

RECUR_AVX2 void gru_update_avx2(const float* z, const float* r, const float* gh, const float* xh,
                                int64_t H, float* h) {
  for (int64_t j = 0; j < H; j += 8) {
    const __m256i m = lanes8(H - j);
    __m256 a = load8(gh + j, m);
    if (xh) a = _mm256_fmadd_ps(load8(r + j, m), a, load8(xh + j, m));
    const __m256 ht = avx2::tanh8(a);
    const __m256 hp = load8(h + j, m);
    store8(h + j, m, _mm256_fmadd_ps(load8(z + j, m), _mm256_sub_ps(hp, ht), ht));
  }
}

// Relu as small_rnn.cc's: max returns its second operand on a NaN, so a NaN gives 0.
RECUR_AVX2 void rnn_activate_avx2(const float* g, int64_t H, RnnActivation::Kind f, float* h) {
  using Kind = RnnActivation::Kind;
  for (int64_t j = 0; j < H; j += 8) {
    const __m256i m = lanes8(H - j);
    const __m256 a = load8(g + j, m);
    const __m256 v = f == Kind::kRelu      ? _mm256_max_ps(a, _mm256_setzero_ps())
                     : f == Kind::kSigmoid ? avx2::sigmoid8(a)
                                           : avx2::tanh8(a);
    store8(h + j, m, v);
  }
}

}  // namespace recur::onednn::small
