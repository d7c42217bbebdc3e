// The small-cell float32 LSTM (small_cell.h): gates in ONNX's order i, o, f, c, optional
// peepholes and input_forget, any activations and clip.
#include <algorithm>
#include <cstring>
#include <vector>

#include "providers/onednn/rnn/small_cell.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn::small {

RECUR_AVX512 void lstm_cell_update_avx512(const float* g, int64_t H, const float* p,
                                          bool input_forget, float* c, float* h) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t j = 0; j < H; j += kLanes) {
    const __mmask16 m = lanes(H - j);
    __m512 gi = _mm512_maskz_loadu_ps(m, g + j);
    __m512 go = _mm512_maskz_loadu_ps(m, g + H + j);
    __m512 gf = _mm512_maskz_loadu_ps(m, g + 2 * H + j);
    const __m512 gc = _mm512_maskz_loadu_ps(m, g + 3 * H + j);
    const __m512 cp = _mm512_maskz_loadu_ps(m, c + j);
    if (p) gi = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, p + j), cp, gi);
    const __m512 i = sigmoid16(gi);
    __m512 f;
    if (input_forget) {
      f = _mm512_sub_ps(one, i);
    } else {
      if (p) gf = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, p + 2 * H + j), cp, gf);
      f = sigmoid16(gf);
    }
    const __m512 cn = _mm512_fmadd_ps(f, cp, _mm512_mul_ps(i, tanh16(gc)));
    if (p) go = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, p + H + j), cn, go);
    _mm512_mask_storeu_ps(c + j, m, cn);
    _mm512_mask_storeu_ps(h + j, m, _mm512_mul_ps(sigmoid16(go), tanh16(cn)));
  }
}

namespace {

// One direction's weights, packed at load: W and R as [K][Gp] (Gp: 4H rounded up to whole
// vectors), Wb + Rb, and the peepholes.
struct DirWeights {
  OneProductWeights m;
  std::vector<float> peep;  // i, o, f (3H); empty without P
};

class SmallLstmKernel final : public SmallRnnKernel {
 public:
  using SmallRnnKernel::SmallRnnKernel;
  void init(const CellWeights& cw);

 private:
  int64_t job_floats(int64_t rows) const override { return one_product_floats(rows, Gp_, true); }
  Status run_job(const KernelContext& ctx, const Io& io, const Job& j,
                 float* scratch) const override;

  int64_t Gp_ = 0;
  std::vector<DirWeights> dirs_;
};

RECUR_LOAD_PATH void SmallLstmKernel::init(const CellWeights& cw) {
  I_ = cw.w->dim(2);
  H_ = cw.r->dim(2);
  const int64_t G = 4 * H_;
  Gp_ = round_up(G, kLanes);
  keep_shapes(*cw.w, *cw.r, cw.b, cw.p);
  std::vector<OneProductWeights> products = pack_one_products(cw, G, Gp_);
  for (int64_t d = 0; d < spec_.num_directions(); ++d) {
    DirWeights dw;
    dw.m = std::move(products[static_cast<size_t>(d)]);
    if (cw.p)
      dw.peep.assign(cw.p->data<float>() + d * 3 * H_, cw.p->data<float>() + (d + 1) * 3 * H_);
    dirs_.push_back(std::move(dw));
  }
  release_bias_and_peepholes(cw);
  cw.note(note("LSTM", G));
}

Status SmallLstmKernel::run_job(const KernelContext& ctx, const Io& io, const Job& j,
                                float* scratch) const {
  const DirWeights& dw = dirs_[static_cast<size_t>(j.d)];
  const float* peep = dw.peep.empty() ? nullptr : dw.peep.data();
  const CellMath math = cell_math(spec_, general_, j.d);
  return run_one_product(ctx, io, j, scratch, static_cast<const float*>(dw.m.w->data),
                         static_cast<const float*>(dw.m.bias->data),
                         static_cast<const float*>(dw.m.r->data), Gp_, true,
                         [&](float* g, float* c, float* h) {
                           lstm_cell_update(math, g, H_, peep, spec_.input_forget, c, h);
                         });
}

}  // namespace

RECUR_LOAD_PATH std::unique_ptr<Kernel> make_small_lstm(const Node& node, RnnSpec spec, int threads,
                                                        const CellWeights& cw) {
  auto k = std::make_unique<SmallLstmKernel>(node, std::move(spec), threads);
  k->init(cw);
  return k;
}

}  // namespace recur::onednn::small
