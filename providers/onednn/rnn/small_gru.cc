// The small-cell float32 GRU (small_cell.h): gates in ONNX's order z, r, h, with and without
// linear_before_reset, any activations and clip. A step multiplies h by R's z and r columns
// first; h's own product then takes r.h (linear_before_reset=0) or h itself, its result scaled
// by r after (linear_before_reset=1).
#include <algorithm>
#include <cstring>
#include <vector>

#include "providers/onednn/rnn/small_cell.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn::small {

// z and r in place: the sigmoid of the first 2H gates.
RECUR_AVX512 void sigmoid_rows_avx512(float* g, int64_t n) {
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lanes(n - j);
    _mm512_mask_storeu_ps(g + j, m, sigmoid16(_mm512_maskz_loadu_ps(m, g + j)));
  }
}

// out = r . h
RECUR_AVX512 void scale_rows_avx512(const float* r, const float* h, int64_t n, float* out) {
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = lanes(n - j);
    _mm512_mask_storeu_ps(
        out + j, m,
        _mm512_mul_ps(_mm512_maskz_loadu_ps(m, r + j), _mm512_maskz_loadu_ps(m, h + j)));
  }
}

// h = h~ + z (h - h~), h~ = tanh(gh) or, with linear_before_reset, tanh(xh + r gh).
RECUR_AVX512 void gru_update_avx512(const float* z, const float* r, const float* gh,
                                    const float* xh, int64_t H, float* h) {
  for (int64_t j = 0; j < H; j += kLanes) {
    const __mmask16 m = lanes(H - j);
    __m512 a = _mm512_maskz_loadu_ps(m, gh + j);
    if (xh)
      a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r + j), a, _mm512_maskz_loadu_ps(m, xh + j));
    const __m512 ht = tanh16(a);
    const __m512 hp = _mm512_maskz_loadu_ps(m, h + j);
    _mm512_mask_storeu_ps(
        h + j, m, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, z + j), _mm512_sub_ps(hp, ht), ht));
  }
}

namespace {

// One direction's weights, packed at load. X.W + bias rows are Gx = Gp1 + Gp2 wide: z and r in
// [0, 2H), h from Gp1 (Gp1: 2H, Gp2: H, each rounded up to whole vectors).
struct DirWeights {
  std::unique_ptr<AlignedBuffer> w;     // [I][Gx]
  std::unique_ptr<AlignedBuffer> rzr;   // [H][Gp1]: R's z and r rows
  std::unique_ptr<AlignedBuffer> rh;    // [H][Gp2]: R's h rows
  std::unique_ptr<AlignedBuffer> bias;  // [Gx]: Wb + Rb (h: Wb, and Rb without linear_before_reset)
  std::unique_ptr<AlignedBuffer> rbh;   // [Gp2]: Rb of h with linear_before_reset, else zeros
};

class SmallGruKernel final : public SmallRnnKernel {
 public:
  using SmallRnnKernel::SmallRnnKernel;
  void init(const CellWeights& cw);

 private:
  // z|r and h gates and r.h of four rows, h of the job's rows, X.W + bias of a block of steps.
  int64_t job_floats(int64_t rows) const override {
    return kRowBlock * (Gp1_ + 2 * Gp2_) + rows * H_ + kLanes +
           time_block(rows, Gp1_ + Gp2_) * rows * (Gp1_ + Gp2_);
  }
  Status run_job(const KernelContext& ctx, const Io& io, const Job& j,
                 float* scratch) const override;

  int64_t Gp1_ = 0, Gp2_ = 0;
  std::vector<DirWeights> dirs_;
};

RECUR_LOAD_PATH void SmallGruKernel::init(const CellWeights& cw) {
  I_ = cw.w->dim(2);
  H_ = cw.r->dim(2);
  const int64_t H = H_, G = 3 * H;
  Gp1_ = round_up(2 * H, kLanes);
  Gp2_ = round_up(H, kLanes);
  const int64_t Gx = Gp1_ + Gp2_, Gp1 = Gp1_;
  const bool lbr = spec_.linear_before_reset;
  // X's product: z and r in the first Gp1 columns, h after them.
  std::vector<int64_t> x_source = column_sources(Gx, 2 * H);
  for (int64_t c = 0; c < H; ++c) x_source[static_cast<size_t>(Gp1 + c)] = 2 * H + c;
  const std::vector<int64_t> zr_source = column_sources(Gp1_, 2 * H);
  const std::vector<int64_t> h_source = column_sources(Gp2_, H, 2 * H);
  keep_shapes(*cw.w, *cw.r, cw.b, nullptr);
  // W for every direction and then R, each ONNX copy freed once packed (pack_one_products).
  dirs_.resize(static_cast<size_t>(spec_.num_directions()));
  const bool last_w = cw.dies_on_release(kRnnW);
  for (int64_t d = 0; d < spec_.num_directions(); ++d)
    dirs_[static_cast<size_t>(d)].w =
        pack_columns(cw.w->data<float>() + d * G * I_, I_, x_source, I_, 1, last_w);
  cw.release(kRnnW);
  // R's rows z, r and then h, each read once: the two packs discard disjoint rows.
  const bool last_r = cw.dies_on_release(kRnnR);
  for (int64_t d = 0; d < spec_.num_directions(); ++d) {
    DirWeights& dw = dirs_[static_cast<size_t>(d)];
    const float* rd = cw.r->data<float>() + d * G * H;
    dw.rzr = pack_columns(rd, H, zr_source, H, 1, last_r);
    dw.rh = pack_columns(rd, H, h_source, H, 1, last_r);
    dw.bias = zeros(Gx);
    dw.rbh = zeros(Gp2_);
    if (cw.b) {
      const float* wb = cw.b->data<float>() + d * 2 * G;
      const float* rb = wb + G;
      float* bias = static_cast<float*>(dw.bias->data);
      for (int64_t c = 0; c < 2 * H; ++c) bias[c] = wb[c] + rb[c];
      for (int64_t k = 0; k < H; ++k) {
        bias[Gp1 + k] = wb[2 * H + k] + (lbr ? 0.0f : rb[2 * H + k]);
        if (lbr) static_cast<float*>(dw.rbh->data)[k] = rb[2 * H + k];
      }
    }
  }
  cw.release(kRnnR);
  release_bias_and_peepholes(cw);
  cw.note(note("GRU", G));
}

Status SmallGruKernel::run_job(const KernelContext& ctx, const Io& io, const Job& j,
                               float* scratch) const {
  const int64_t H = H_, Gp1 = Gp1_, Gp2 = Gp2_, Gx = Gp1 + Gp2;
  const DirWeights& dw = dirs_[static_cast<size_t>(j.d)];
  const bool lbr = spec_.linear_before_reset;
  const CellMath math = cell_math(spec_, general_, j.d);
  const float* rzr = static_cast<const float*>(dw.rzr->data);
  const float* rh = static_cast<const float*>(dw.rh->data);
  const float* rbh = static_cast<const float*>(dw.rbh->data);
  float* gzr = scratch;               // [kRowBlock][Gp1]
  float* gh = gzr + kRowBlock * Gp1;  // [kRowBlock][Gp2]
  float* rhs = gh + kRowBlock * Gp2;  // [kRowBlock][Gp2]: r.h
  float* hs = rhs + kRowBlock * Gp2;  // [rows][H]
  float* xw = hs + j.rows * H;        // [time_block][rows][Gx]
  xw += (kLanes - (xw - scratch) % kLanes) % kLanes;
  load_states(io, j, hs, nullptr);
  std::array<const float*, kRowBlock> init{}, in{};
  std::array<float*, kRowBlock> out{};
  RECUR_RETURN_IF_ERROR(walk(
      ctx, io, j, static_cast<const float*>(dw.w->data), static_cast<const float*>(dw.bias->data),
      Gx, xw, [&](int64_t q0, int n, const float* const* xw_rows, const int64_t* at) {
        for (int q = 0; q < n; ++q) {
          in[static_cast<size_t>(q)] = hs + (q0 + q) * H;
          out[static_cast<size_t>(q)] = gzr + q * Gp1;
        }
        multiply_rows(n, xw_rows, in.data(), H, rzr, Gp1, out.data());
        for (int q = 0; q < n; ++q) {
          gru_gates(math, gzr + q * Gp1, 2 * H);
          if (lbr) {
            init[static_cast<size_t>(q)] = rbh;
          } else {
            scale_rows(gzr + q * Gp1 + H, hs + (q0 + q) * H, H, rhs + q * Gp2);
            in[static_cast<size_t>(q)] = rhs + q * Gp2;
            init[static_cast<size_t>(q)] = xw_rows[q] + Gp1;
          }
          out[static_cast<size_t>(q)] = gh + q * Gp2;
        }
        multiply_rows(n, init.data(), in.data(), H, rh, Gp2, out.data());
        for (int q = 0; q < n; ++q) {
          float* h = hs + (q0 + q) * H;
          const float* g = gzr + q * Gp1;
          gru_update(math, g, g + H, gh + q * Gp2, lbr ? xw_rows[q] + Gp1 : nullptr, H, h);
          std::memcpy(io.y_at(at[q], j.d, j.row(io, q0 + q)), h,
                      static_cast<size_t>(H) * sizeof(float));
        }
      }));
  store_states(io, j, hs, nullptr);
  return ok_status();
}

}  // namespace

RECUR_LOAD_PATH std::unique_ptr<Kernel> make_small_gru(const Node& node, RnnSpec spec, int threads,
                                                       const CellWeights& cw) {
  auto k = std::make_unique<SmallGruKernel>(node, std::move(spec), threads);
  k->init(cw);
  return k;
}

}  // namespace recur::onednn::small
