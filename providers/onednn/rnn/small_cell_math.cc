// The small-cell kernels' general path (small_cell.h, general_cell_math): cells whose clip or
// activations oneDNN's primitives do not have, such as the hard sigmoid of Keras's LSTMs and
// GRUs. A gate at a time, in the reference provider's order (providers/reference/rnn): clipped,
// then activated in place, then combined. The activations run 16 lanes a vector with AVX-512, 8
// with AVX2; Elu and Softplus, which need expm1 and log1p, element by element.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "providers/onednn/common/avx2_rows.h"
#include "providers/onednn/rnn/small_cell.h"

namespace recur::onednn::small {

namespace {

using Kind = RnnActivation::Kind;

// The reference's clip, std::min(bound, std::max(-bound, x)), gives -bound for a NaN; so do
// these: max returns its second operand where either is a NaN.
RECUR_AVX512 void activate_avx512(float* x, int64_t n, const RnnActivation& f,
                                  const std::optional<float>& clip) {
  const __m512 alpha = _mm512_set1_ps(f.alpha), beta = _mm512_set1_ps(f.beta);
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  const __m512 hi = _mm512_set1_ps(clip.value_or(0.0f)), lo = _mm512_set1_ps(-clip.value_or(0.0f));
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lanes(n - j);
    __m512 v = _mm512_maskz_loadu_ps(m, x + j);
    if (clip) v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    switch (f.kind) {
      case Kind::kRelu:  // 0 for a NaN, as the reference's x > 0 ? x : 0
        v = _mm512_max_ps(v, zero);
        break;
      case Kind::kTanh:
        v = tanh16(v);
        break;
      case Kind::kSigmoid:
        v = sigmoid16(v);
        break;
      case Kind::kAffine:
        v = _mm512_fmadd_ps(alpha, v, beta);
        break;
      case Kind::kLeakyRelu:
        v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero, _CMP_GE_OQ), _mm512_mul_ps(alpha, v),
                                 v);
        break;
      case Kind::kThresholdedRelu:
        v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, alpha, _CMP_GT_OQ), v);
        break;
      case Kind::kScaledTanh:
        v = _mm512_mul_ps(alpha, tanh16(_mm512_mul_ps(beta, v)));
        break;
      case Kind::kHardSigmoid:  // 1 for a NaN, as the reference's max(0, min(1, y))
        v = _mm512_max_ps(_mm512_min_ps(_mm512_fmadd_ps(alpha, v, beta), one), zero);
        break;
      case Kind::kSoftsign:
        v = _mm512_div_ps(v, _mm512_add_ps(one, _mm512_abs_ps(v)));
        break;
      default:  // Elu and Softplus: activate_rows runs them element by element
        break;
    }
    _mm512_mask_storeu_ps(x + j, m, v);
  }
}

RECUR_AVX2 void activate_avx2(float* x, int64_t n, const RnnActivation& f,
                              const std::optional<float>& clip) {
  const __m256 alpha = _mm256_set1_ps(f.alpha), beta = _mm256_set1_ps(f.beta);
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  const __m256 hi = _mm256_set1_ps(clip.value_or(0.0f)), lo = _mm256_set1_ps(-clip.value_or(0.0f));
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i m = avx2::lanes8(n - j);
    __m256 v = _mm256_maskload_ps(x + j, m);
    if (clip) v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    switch (f.kind) {
      case Kind::kRelu:
        v = _mm256_max_ps(v, zero);
        break;
      case Kind::kTanh:
        v = avx2::tanh8(v);
        break;
      case Kind::kSigmoid:
        v = avx2::sigmoid8(v);
        break;
      case Kind::kAffine:
        v = _mm256_fmadd_ps(alpha, v, beta);
        break;
      case Kind::kLeakyRelu:
        v = _mm256_blendv_ps(_mm256_mul_ps(alpha, v), v, _mm256_cmp_ps(v, zero, _CMP_GE_OQ));
        break;
      case Kind::kThresholdedRelu:
        v = _mm256_and_ps(_mm256_cmp_ps(v, alpha, _CMP_GT_OQ), v);
        break;
      case Kind::kScaledTanh:
        v = _mm256_mul_ps(alpha, avx2::tanh8(_mm256_mul_ps(beta, v)));
        break;
      case Kind::kHardSigmoid:
        v = _mm256_max_ps(_mm256_min_ps(_mm256_fmadd_ps(alpha, v, beta), one), zero);
        break;
      case Kind::kSoftsign:
        v = _mm256_div_ps(v, _mm256_add_ps(one, _mm256_andnot_ps(sign, v)));
        break;
      default:
        break;
    }
    _mm256_maskstore_ps(x + j, m, v);
  }
}

}  // namespace

void activate_rows(float* x, int64_t n, const RnnActivation& f, const std::optional<float>& clip) {
  if (f.kind == Kind::kElu || f.kind == Kind::kSoftplus) {
    for (int64_t i = 0; i < n; ++i) {
      float v = clip ? std::min(*clip, std::max(-*clip, x[i])) : x[i];
      if (f.kind == Kind::kElu) {
        v = v >= 0.0f ? v : f.alpha * std::expm1(v);
      } else {  // log(1 + e^v) without overflowing e^v
        v = v > 0.0f ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
      }
      x[i] = v;
    }
    return;
  }
  if (avx512_here()) return activate_avx512(x, n, f, clip);
  activate_avx2(x, n, f, clip);
}

void lstm_cell_general(float* g, int64_t H, const float* p, bool input_forget,
                       const RnnActivation* act, const std::optional<float>& clip, float* c,
                       float* h) {
  float* gi = g;
  float* go = g + H;
  float* gf = g + 2 * H;
  float* gc = g + 3 * H;
  if (p)
    for (int64_t j = 0; j < H; ++j) gi[j] += p[j] * c[j];
  activate_rows(gi, H, act[0], clip);
  if (input_forget) {
    for (int64_t j = 0; j < H; ++j) gf[j] = 1.0f - gi[j];
  } else {
    if (p)
      for (int64_t j = 0; j < H; ++j) gf[j] += p[2 * H + j] * c[j];
    activate_rows(gf, H, act[0], clip);
  }
  activate_rows(gc, H, act[1], clip);
  for (int64_t j = 0; j < H; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
  if (p)
    for (int64_t j = 0; j < H; ++j) go[j] += p[H + j] * c[j];
  activate_rows(go, H, act[0], clip);
  // c~ is spent: its space holds h(c), which the clip does not bound.
  std::memcpy(gc, c, static_cast<size_t>(H) * sizeof(float));
  activate_rows(gc, H, act[2], std::nullopt);
  for (int64_t j = 0; j < H; ++j) h[j] = go[j] * gc[j];
}

void gru_update_general(const float* z, const float* r, float* gh, const float* xh, int64_t H,
                        const RnnActivation& g, const std::optional<float>& clip, float* h) {
  if (xh)
    for (int64_t j = 0; j < H; ++j) gh[j] = xh[j] + r[j] * gh[j];
  activate_rows(gh, H, g, clip);
  for (int64_t j = 0; j < H; ++j) h[j] = (1.0f - z[j]) * gh[j] + z[j] * h[j];
}

}  // namespace recur::onednn::small
