// The small-cell float32 LSTM (small_cell.h): gates in ONNX's order i, o, f, c, optional
// peepholes and input_forget.
#include <algorithm>
#include <cstring>
#include <vector>

#include "providers/onednn/rnn/small_cell.h"

namespace recur::onednn::small {

namespace {

// One row's cell update from its gates g (ONNX order i, o, f, c, each H wide): c and h in place.
// p: the peepholes i, o, f (3H), or null.
RECUR_AVX512 void cell_update(const float* g, int64_t H, const float* p, bool input_forget,
                              float* c, float* h) {
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

// One direction's weights, packed at load: W and R as [K][Gp] (Gp: 4H rounded up to whole
// vectors), Wb + Rb, and the peepholes.
struct DirWeights {
  std::unique_ptr<AlignedBuffer> w, r, bias;
  std::vector<float> peep;  // i, o, f (3H); empty without P
};

class SmallLstmKernel final : public SmallRnnKernel {
 public:
  using SmallRnnKernel::SmallRnnKernel;
  void init(CompileContext& ctx, const Tensor& w, const Tensor& r, const Tensor* b,
            const Tensor* p);

 private:
  // The gates of four rows, h and c of the job's rows, and X.W + bias of a block of steps.
  int64_t job_floats(int64_t rows) const override {
    return kRowBlock * Gp_ + 2 * rows * H_ + kLanes + time_block(rows, Gp_) * rows * Gp_;
  }
  Status run_job(const KernelContext& ctx, const Io& io, const Job& j,
                 float* scratch) const override;

  int64_t Gp_ = 0;
  std::vector<DirWeights> dirs_;
};

void SmallLstmKernel::init(CompileContext& ctx, const Tensor& w, const Tensor& r, const Tensor* b,
                           const Tensor* p) {
  I_ = w.dim(2);
  H_ = r.dim(2);
  const int64_t G = 4 * H_;
  Gp_ = round_up(G, kLanes);
  auto same = [G](int64_t c) { return c < G ? c : -1; };
  for (int64_t d = 0; d < spec_.num_directions(); ++d) {
    DirWeights dw;
    dw.w = pack_columns(w.data<float>() + d * G * I_, I_, Gp_, same, I_, 1);
    dw.r = pack_columns(r.data<float>() + d * G * H_, H_, Gp_, same, H_, 1);
    dw.bias = std::make_unique<AlignedBuffer>(static_cast<size_t>(Gp_) * sizeof(float));
    float* bias = static_cast<float*>(dw.bias->data);
    std::fill(bias, bias + Gp_, 0.0f);
    if (b) {
      const float* bd = b->data<float>() + d * 2 * G;
      for (int64_t col = 0; col < G; ++col) bias[col] = bd[col] + bd[G + col];
    }
    if (p) dw.peep.assign(p->data<float>() + d * 3 * H_, p->data<float>() + (d + 1) * 3 * H_);
    dirs_.push_back(std::move(dw));
  }
  release(ctx, w, r, b, p);
  ctx.note("recur's small-cell LSTM (AVX-512), not a oneDNN primitive: W and R packed at load, " +
           std::to_string(G * (I_ + H_)) + " multiply-adds a row-step (oneDNN above " +
           std::to_string(kSmallCellMaxMacs) + ")");
}

Status SmallLstmKernel::run_job(const KernelContext& ctx, const Io& io, const Job& j,
                                float* scratch) const {
  const int64_t H = H_, Gp = Gp_;
  const DirWeights& dw = dirs_[static_cast<size_t>(j.d)];
  const float* r = static_cast<const float*>(dw.r->data);
  const float* peep = dw.peep.empty() ? nullptr : dw.peep.data();
  float* g = scratch;              // [kRowBlock][Gp]: one block's gates
  float* hs = g + kRowBlock * Gp;  // [rows][H]
  float* cs = hs + j.rows * H;     // [rows][H]
  float* xw = cs + j.rows * H;     // [time_block][rows][Gp]
  xw += (kLanes - (xw - scratch) % kLanes) % kLanes;
  load_states(io, j, hs, cs);
  std::array<const float*, kRowBlock> hp{};
  std::array<float*, kRowBlock> gp{};
  RECUR_RETURN_IF_ERROR(walk(
      ctx, io, j, static_cast<const float*>(dw.w->data), static_cast<const float*>(dw.bias->data),
      Gp, xw, [&](int64_t q0, int n, const float* const* xw_rows, const int64_t* at) {
        for (int q = 0; q < n; ++q) {
          hp[static_cast<size_t>(q)] = hs + (q0 + q) * H;
          gp[static_cast<size_t>(q)] = g + q * Gp;
        }
        multiply_rows(n, xw_rows, hp.data(), H, r, Gp, gp.data());
        for (int q = 0; q < n; ++q) {
          float* h = hs + (q0 + q) * H;
          cell_update(g + q * Gp, H, peep, spec_.input_forget, cs + (q0 + q) * H, h);
          std::memcpy(io.y_at(at[q], j.d, j.row(io, q0 + q)), h,
                      static_cast<size_t>(H) * sizeof(float));
        }
      }));
  store_states(io, j, hs, cs);
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_small_lstm(CompileContext& ctx, RnnSpec spec, int threads) {
  auto k = std::make_unique<SmallLstmKernel>(ctx.node(), std::move(spec), threads);
  k->init(ctx, *ctx.constant_input(kRnnW), *ctx.constant_input(kRnnR), ctx.constant_input(kRnnB),
          ctx.constant_input(kRnnP));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace recur::onednn::small
