#include "providers/onednn/nn/winograd_weights.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/job_pool.h"

namespace recur::onednn {

namespace {

constexpr int kTaps = 3;  // the kernel's side: r in oneDNN's wino_desc
constexpr int kMaxAlpha = 6;

// G of F(2x2, 3x3), alpha 4: the interpolation points 0, 1, -1 and infinity.
constexpr float kG4[4][kTaps] = {
    {1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};
// G of F(4x4, 3x3), alpha 6, with the row scales oneDNN's kernels divide out of the outputs
// (their input and output transforms are built for these rows, so no other G will do).
constexpr float kG6[6][kTaps] = {{1.13777777777778f, 0.0f, 0.0f},
                                 {-0.688403361344538f, -0.430252100840336f, -0.26890756302521f},
                                 {-0.688403361344538f, 0.430252100840336f, -0.26890756302521f},
                                 {0.119514472455649f, 0.179271708683473f, 0.26890756302521f},
                                 {0.119514472455649f, -0.179271708683473f, 0.26890756302521f},
                                 {0.0f, 0.0f, 1.0f}};

// Where element (a, b, i, o) of the transformed weights goes: tile row a and column b, padded
// input channel i and output channel o. In every layout but aaOIoi, o's place within its block
// of ocb is the innermost index, so a block's 16 channels are one run.
struct Layout {
  dnnl_wino_desc_t d;
  int64_t nb_ic, nb_oc;

  int64_t at(int64_t a, int64_t b, int64_t i, int64_t o) const {
    const int64_t alpha = d.alpha, ic = d.ic, oc = d.oc, icb = d.ic_block, ocb = d.oc_block;
    const int64_t ib = i / icb, ii = i % icb, ob = o / ocb, oo = o % ocb;
    const int64_t tile = (a * alpha + b) * ic * oc;
    switch (d.wino_format) {
      case dnnl_wino_wei_aaOIoi:
        return tile + ((ob * nb_ic + ib) * ocb + oo) * icb + ii;
      case dnnl_wino_wei_aaOio:
        return tile + ((ob * nb_ic + ib) * icb + ii) * ocb + oo;
      case dnnl_wino_wei_aaOBiOo: {
        const int64_t oc2 = d.oc2_block, occ = ob / oc2, ob2 = ob % oc2;
        return tile + (((occ * nb_ic + ib) * icb + ii) * oc2 + ob2) * ocb + oo;
      }
      default: {  // dnnl_wino_wei_OBaaIBOIio
        const int64_t oc2 = d.oc2_block, ic2 = d.ic2_block;
        const int64_t occ = ob / oc2, ob2 = ob % oc2, icc = ib / ic2, ib2 = ib % ic2;
        const int64_t chunk = ((occ * alpha + a) * alpha + b) * (nb_ic / ic2) + icc;
        return (((chunk * oc2 + ob2) * ic2 + ib2) * icb + ii) * ocb + oo;
      }
    }
  }
};

bool supported(const dnnl_wino_desc_t& d) {
  const bool four = d.wino_format == dnnl_wino_wei_OBaaIBOIio;
  const bool two = d.wino_format == dnnl_wino_wei_aaOIoi || d.wino_format == dnnl_wino_wei_aaOio ||
                   d.wino_format == dnnl_wino_wei_aaOBiOo;
  if (!(four && d.alpha == 6) && !(two && d.alpha == 4)) return false;
  if (d.r != kTaps || d.adj_scale != 1.0f || d.ic <= 0 || d.oc <= 0) return false;
  // Blocks of 16 output channels: one vector of the transform.
  if (d.oc_block != avx512::kLanes || d.ic_block <= 0 || d.ic % d.ic_block != 0 ||
      d.oc % d.oc_block != 0)
    return false;
  const int64_t nb_ic = d.ic / d.ic_block, nb_oc = d.oc / d.oc_block;
  if (d.wino_format != dnnl_wino_wei_aaOIoi && d.wino_format != dnnl_wino_wei_aaOio &&
      (d.oc2_block <= 0 || nb_oc % d.oc2_block != 0))
    return false;
  if (four && (d.ic2_block <= 0 || nb_ic % d.ic2_block != 0)) return false;
  const auto elements = static_cast<size_t>(d.alpha) * static_cast<size_t>(d.alpha) *
                        static_cast<size_t>(d.ic) * static_cast<size_t>(d.oc);
  return d.size == elements * sizeof(float);
}

// Every (input channel, block of 16 output channels) of blocks [ob0, ob1): the 3x3 kernels of
// the block as vectors, then G g G^T as vector products, each of the alpha x alpha results one
// run of 16 channels.
RECUR_AVX512 void transform(const Layout& l, const float* w, int64_t M, int64_t C, int64_t ob0,
                            int64_t ob1, float* out) {
  const int alpha = l.d.alpha;
  const float(*G)[kTaps] = alpha == 6 ? kG6 : kG4;
  const bool runs = l.d.wino_format != dnnl_wino_wei_aaOIoi;
  constexpr int64_t kV = avx512::kLanes;
  alignas(64) float taps[kTaps * kTaps][kV];
  alignas(64) float tile[kV];
  for (int64_t ob = ob0; ob < ob1; ++ob) {
    const int64_t o0 = ob * kV, live = std::clamp<int64_t>(M - o0, 0, kV);
    for (int64_t i = 0; i < l.d.ic; ++i) {
      // Padded channels (i >= C, o >= M) hold zeros.
      std::memset(taps, 0, sizeof(taps));
      if (i < C) {
        for (int64_t o = 0; o < live; ++o) {
          const float* k = w + ((o0 + o) * C + i) * kTaps * kTaps;
          for (int t = 0; t < kTaps * kTaps; ++t) taps[t][o] = k[t];
        }
      }
      // g G^T: row k of the kernel against row j of G.
      __m512 half[kTaps][kMaxAlpha];
      for (int k = 0; k < kTaps; ++k) {
        for (int j = 0; j < alpha; ++j) {
          __m512 s = _mm512_mul_ps(_mm512_load_ps(taps[k * kTaps]), _mm512_set1_ps(G[j][0]));
          s = _mm512_fmadd_ps(_mm512_load_ps(taps[k * kTaps + 1]), _mm512_set1_ps(G[j][1]), s);
          half[k][j] =
              _mm512_fmadd_ps(_mm512_load_ps(taps[k * kTaps + 2]), _mm512_set1_ps(G[j][2]), s);
        }
      }
      for (int a = 0; a < alpha; ++a) {
        for (int b = 0; b < alpha; ++b) {
          __m512 u = _mm512_mul_ps(half[0][b], _mm512_set1_ps(G[a][0]));
          u = _mm512_fmadd_ps(half[1][b], _mm512_set1_ps(G[a][1]), u);
          u = _mm512_fmadd_ps(half[2][b], _mm512_set1_ps(G[a][2]), u);
          if (runs) {
            _mm512_storeu_ps(out + l.at(a, b, i, o0), u);
          } else {
            _mm512_store_ps(tile, u);
            for (int64_t o = 0; o < kV; ++o) out[l.at(a, b, i, o0 + o)] = tile[o];
          }
        }
      }
    }
  }
}

}  // namespace

bool winograd_weights(const dnnl::memory::desc& plain, const float* w,
                      const dnnl::memory::desc& packed, float* out, int jobs) {
  if (packed.data.format_kind != dnnl_format_kind_wino ||
      packed.data_type() != dnnl::memory::data_type::f32 || !avx512::have_avx512())
    return false;
  const dnnl_wino_desc_t& d = packed.data.format_desc.wino_desc;
  if (!supported(d)) return false;
  const dnnl::memory::dims dims = plain.dims();
  if (dims.size() != 4 || dims[2] != kTaps || dims[3] != kTaps || dims[0] > d.oc ||
      dims[1] > d.ic ||
      plain !=
          dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::oihw))
    return false;
  const Layout l{d, d.ic / d.ic_block, d.oc / d.oc_block};
  // Each block of output channels writes its own elements of `out`.
  in_parts(l.nb_oc, std::clamp<int64_t>(jobs, 1, l.nb_oc),
           [&](int64_t ob0, int64_t ob1) { transform(l, w, dims[0], dims[1], ob0, ob1, out); });
  return true;
}

}  // namespace recur::onednn
