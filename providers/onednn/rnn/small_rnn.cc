// The small-cell float32 vanilla RNN (small_cell.h): h = f(X.W + Wb + Rb + h.R), f per
// direction: tanh, relu or sigmoid fused, any other (or a clip) on the general path.
#include <algorithm>
#include <cstring>
#include <vector>

#include "providers/onednn/rnn/small_cell.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn::small {

using Kind = RnnActivation::Kind;

// An RNN's Relu gives 0 for a NaN, as the reference's cell (g > 0 ? g : 0), ONNX Runtime's
// (measured: a NaN in X, Y without NaN) and oneDNN's vanilla RNN primitive do: max returns its
// second operand on a NaN. (A standalone Relu keeps NaN; docs/semantics.md.)
RECUR_AVX512 void rnn_activate_avx512(const float* g, int64_t H, Kind f, float* h) {
  for (int64_t j = 0; j < H; j += kLanes) {
    const __mmask16 m = lanes(H - j);
    const __m512 a = _mm512_maskz_loadu_ps(m, g + j);
    const __m512 v = f == Kind::kRelu      ? _mm512_max_ps(a, _mm512_setzero_ps())
                     : f == Kind::kSigmoid ? sigmoid16(a)
                                           : tanh16(a);
    _mm512_mask_storeu_ps(h + j, m, v);
  }
}

namespace {

struct DirWeights {
  OneProductWeights m;  // W [I][Gp], R [H][Gp], Wb + Rb [Gp]
};

class SmallVanillaKernel final : public SmallRnnKernel {
 public:
  using SmallRnnKernel::SmallRnnKernel;
  void init(const CellWeights& cw);

 private:
  int64_t job_floats(int64_t rows) const override { return one_product_floats(rows, Gp_, false); }
  Status run_job(const KernelContext& ctx, const Io& io, const Job& j,
                 float* scratch) const override;

  int64_t Gp_ = 0;
  std::vector<DirWeights> dirs_;
};

RECUR_LOAD_PATH void SmallVanillaKernel::init(const CellWeights& cw) {
  I_ = cw.w->dim(2);
  H_ = cw.r->dim(2);
  const int64_t H = H_;
  Gp_ = round_up(H, kLanes);
  keep_shapes(*cw.w, *cw.r, cw.b, nullptr);
  std::vector<OneProductWeights> products = pack_one_products(cw, H, Gp_);
  for (int d = 0; d < spec_.num_directions(); ++d) {
    DirWeights dw;
    dw.m = std::move(products[static_cast<size_t>(d)]);
    dirs_.push_back(std::move(dw));
  }
  release_bias_and_peepholes(cw);
  cw.note(note("RNN", H));
}

Status SmallVanillaKernel::run_job(const KernelContext& ctx, const Io& io, const Job& j,
                                   float* scratch) const {
  const DirWeights& dw = dirs_[static_cast<size_t>(j.d)];
  const CellMath math = cell_math(spec_, general_, j.d);
  return run_one_product(ctx, io, j, scratch, static_cast<const float*>(dw.m.w->data),
                         static_cast<const float*>(dw.m.bias->data),
                         static_cast<const float*>(dw.m.r->data), Gp_, false,
                         [&](const float* g, float*, float* h) { rnn_activate(math, g, H_, h); });
}

}  // namespace

RECUR_LOAD_PATH std::unique_ptr<Kernel> make_small_rnn(const Node& node, RnnSpec spec, int threads,
                                                       const CellWeights& cw) {
  auto k = std::make_unique<SmallVanillaKernel>(node, std::move(spec), threads);
  k->init(cw);
  return k;
}

}  // namespace recur::onednn::small
