// com.microsoft::DynamicQuantizeLSTM (ONNX Runtime's contrib operator): an LSTM with 8-bit W and
// R whose activations are quantized to uint8 on the fly, as ONNX Runtime's CPU kernel does.
// Its numerics are what this kernel pins down: X (all of it, once) and each step's hidden state
// get their own uint8 scale and zero point from their range extended to include 0; the GEMMs
// run on integers (exact in int32), and each accumulator becomes float as
// acc * (activation scale * weight scale of its column). Everything after the GEMMs is the
// float LSTM of rnn/lstm.cc's meaning.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"
#include "providers/reference/rnn/rnn_common.h"
#include "runtime/core/copy_bytes.h"
#include "runtime/rnn/quantized_lstm.h"

namespace recur::reference {

namespace {

// uint8 parameters from the range of n values, extended to include 0.
struct U8Params {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

U8Params u8_params(const float* x, int64_t n) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  U8Params p;
  if (hi > lo) {
    p.scale = (hi - lo) / 255.0f;
    p.zero_point = saturate_round<uint8_t>(0.0f - lo / p.scale);
  }
  return p;
}

void quantize_u8(const float* x, int64_t n, const U8Params& p, int32_t* q) {
  for (int64_t i = 0; i < n; ++i) {
    q[i] =
        saturate_round<uint8_t>(std::nearbyint(x[i] / p.scale) + static_cast<float>(p.zero_point)) -
        p.zero_point;
  }
}

// out[r, g] (+)= sum_k qa[r, k] * (w[k, g] - zw[g]) * (sa * sw[g]), qa already less its zero
// point; w is direction d of a [D, K, G] weight.
void integer_gemm(const int32_t* qa, int64_t rows, int64_t K, const QuantizedWeight& w, int64_t d,
                  float sa, bool accumulate, float* out) {
  const int64_t G = w.q->dim(2);
  std::vector<int32_t> acc(static_cast<size_t>(G));
  std::vector<int32_t> zw(static_cast<size_t>(G));
  std::vector<float> mult(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; ++g) {
    zw[static_cast<size_t>(g)] = quantized_zero_point(w, d, g);
    mult[static_cast<size_t>(g)] = sa * quantized_scale(w, d, g);
  }
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t k = 0; k < K; ++k) {
      const int32_t a = qa[r * K + k];
      if (a == 0) continue;
      const int64_t base = (d * K + k) * G;
      for (int64_t g = 0; g < G; ++g)
        acc[static_cast<size_t>(g)] +=
            a * (quantized_value(w, base + g) - zw[static_cast<size_t>(g)]);
    }
    float* o = out + r * G;
    for (int64_t g = 0; g < G; ++g) {
      const float v =
          static_cast<float>(acc[static_cast<size_t>(g)]) * mult[static_cast<size_t>(g)];
      o[g] = accumulate ? o[g] + v : v;
    }
  }
}

struct Inputs {
  const Tensor *x = nullptr, *b = nullptr, *seq = nullptr, *h0 = nullptr, *c0 = nullptr,
               *p = nullptr;
  QuantizedWeight w, r;
  int64_t T = 0, N = 0, I = 0, H = 0, D = 1;
};

class DynamicQuantizeLstmKernel final : public Kernel {
 public:
  explicit DynamicQuantizeLstmKernel(RnnSpec spec) : spec_(std::move(spec)) {}

  Status run(KernelContext& ctx) const override {
    Inputs in;
    RECUR_RETURN_IF_ERROR(read_inputs(ctx, in));
    const int64_t T = in.T, N = in.N, H = in.H, D = in.D;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(kRnnY, DType::kFloat32, {T, D, N, H}));
    // Y_h and Y_c where the node lists them, else into local buffers: a node may list Y alone.
    std::vector<float> unlisted;
    float* yh = nullptr;
    float* yc = nullptr;
    if (!ctx.output_requested(kRnnYh) || !ctx.output_requested(kRnnYc))
      unlisted.resize(static_cast<size_t>(2 * D * N * H));
    for (auto [index, out, at] : {std::tuple{kRnnYh, &yh, 0}, std::tuple{kRnnYc, &yc, 1}}) {
      if (ctx.output_requested(index)) {
        RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(index, DType::kFloat32, {D, N, H}));
        *out = t->data<float>();
      } else {
        *out = unlisted.data() + at * D * N * H;
      }
    }
    std::fill(y->data<float>(), y->data<float>() + y->numel(), 0.0f);
    // X is quantized once for both directions: ONNX Runtime's reverse pass reads the same
    // values in another order, so its range, scale and zero point are the same.
    const int64_t xn = T * N * in.I;
    const U8Params xp = u8_params(in.x->data<float>(), xn);
    std::vector<int32_t> qx(static_cast<size_t>(xn));
    quantize_u8(in.x->data<float>(), xn, xp, qx.data());
    for (int64_t d = 0; d < D; ++d) {
      RECUR_RETURN_IF_ERROR(run_direction(ctx, in, d, qx, xp, y->data<float>(), yh, yc));
    }
    return ok_status();
  }

 private:
  Status read_inputs(const KernelContext& ctx, Inputs& in) const;
  Status run_direction(const KernelContext& ctx, const Inputs& in, int64_t d,
                       const std::vector<int32_t>& qx, const U8Params& xp, float* y, float* yh,
                       float* yc) const;
  void cell(const Inputs& in, int64_t d, float* g, float* c, float* h) const;

  RnnSpec spec_;
};

Status DynamicQuantizeLstmKernel::read_inputs(const KernelContext& ctx, Inputs& in) const {
  RECUR_ASSIGN_OR_RETURN(in.x, required_input(ctx, kRnnX));
  const std::string where = ctx.node().describe() + ": ";
  if (in.x->dtype() != DType::kFloat32 || in.x->rank() != 3) {
    return invalid_argument(where + "input X must be a float32 tensor of rank 3, got " +
                            std::string(dtype_name(in.x->dtype())) + " " +
                            shape_to_string(in.x->shape()));
  }
  in.w = {ctx.input(kRnnW), ctx.input(kQlstmWScale), ctx.input(kQlstmWZeroPoint)};
  in.r = {ctx.input(kRnnR), ctx.input(kQlstmRScale), ctx.input(kQlstmRZeroPoint)};
  if (!in.r.q || in.r.q->rank() != 3) {
    return invalid_argument(where + "input R must be present with rank 3");
  }
  in.T = in.x->dim(0);
  in.N = in.x->dim(1);
  in.I = in.x->dim(2);
  in.D = spec_.num_directions();
  in.H = in.r.q->dim(1);
  if (spec_.hidden_size > 0 && spec_.hidden_size != in.H) {
    return invalid_argument(where + "hidden_size " + std::to_string(spec_.hidden_size) +
                            " disagrees with R of shape " + shape_to_string(in.r.q->shape()));
  }
  RECUR_RETURN_IF_ERROR(check_quantized_weight(ctx.node(), "W", in.w, in.D, in.I, in.H));
  RECUR_RETURN_IF_ERROR(check_quantized_weight(ctx.node(), "R", in.r, in.D, in.H, in.H));
  in.b = ctx.input(kRnnB);
  in.seq = ctx.input(kRnnSeqLens);
  in.h0 = ctx.input(kRnnInitialH);
  in.c0 = ctx.input(kRnnInitialC);
  in.p = ctx.input(kRnnP);
  const auto check = [&](const Tensor* t, const char* name, DType dt, const Shape& s) {
    if (!t || (t->dtype() == dt && t->shape() == s)) return ok_status();
    return invalid_argument(where + "input " + name + " must be " + std::string(dtype_name(dt)) +
                            " " + shape_to_string(s) + ", got " +
                            std::string(dtype_name(t->dtype())) + " " +
                            shape_to_string(t->shape()));
  };
  RECUR_RETURN_IF_ERROR(check(in.b, "B", DType::kFloat32, {in.D, 8 * in.H}));
  RECUR_RETURN_IF_ERROR(check(in.seq, "sequence_lens", DType::kInt32, {in.N}));
  RECUR_RETURN_IF_ERROR(check(in.h0, "initial_h", DType::kFloat32, {in.D, in.N, in.H}));
  RECUR_RETURN_IF_ERROR(check(in.c0, "initial_c", DType::kFloat32, {in.D, in.N, in.H}));
  RECUR_RETURN_IF_ERROR(check(in.p, "P", DType::kFloat32, {in.D, 3 * in.H}));
  for (int64_t n = 0; in.seq && n < in.N; ++n) {
    const int32_t l = in.seq->data<int32_t>()[n];
    if (l < 0 || l > in.T) {
      return invalid_argument(where + "sequence_lens[" + std::to_string(n) + "] = " +
                              std::to_string(l) + " is outside [0, " + std::to_string(in.T) + "]");
    }
  }
  return ok_status();
}

// One row's gates (ONNX order i,o,f,c, pre-activations with bias) into its c and h.
void DynamicQuantizeLstmKernel::cell(const Inputs& in, int64_t d, float* g, float* c,
                                     float* h) const {
  const int64_t H = in.H;
  float* gi = g + kOnnxLstmI * H;
  float* go = g + kOnnxLstmO * H;
  float* gf = g + kOnnxLstmF * H;
  float* gc = g + kOnnxLstmC * H;
  const float* p = in.p ? in.p->data<float>() + d * 3 * H : nullptr;
  const bool clip = spec_.clip.has_value();
  const float bound = clip ? *spec_.clip : 0.0f;
  const int dir = static_cast<int>(d);
  if (p)
    for (int64_t j = 0; j < H; ++j) gi[j] += p[j] * c[j];
  if (clip) rnn::clip_values(gi, H, bound);
  rnn::activate(spec_.activation(dir, 0), gi, H);
  if (spec_.input_forget) {
    for (int64_t j = 0; j < H; ++j) gf[j] = 1.0f - gi[j];
  } else {
    if (p)
      for (int64_t j = 0; j < H; ++j) gf[j] += p[2 * H + j] * c[j];
    if (clip) rnn::clip_values(gf, H, bound);
    rnn::activate(spec_.activation(dir, 0), gf, H);
  }
  if (clip) rnn::clip_values(gc, H, bound);
  rnn::activate(spec_.activation(dir, 1), gc, H);
  for (int64_t j = 0; j < H; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
  if (p)
    for (int64_t j = 0; j < H; ++j) go[j] += p[H + j] * c[j];
  if (clip) rnn::clip_values(go, H, bound);
  rnn::activate(spec_.activation(dir, 0), go, H);
  copy_bytes(gc, c, static_cast<size_t>(H) * sizeof(float));
  rnn::activate(spec_.activation(dir, 2), gc, H);
  for (int64_t j = 0; j < H; ++j) h[j] = go[j] * gc[j];
}

Status DynamicQuantizeLstmKernel::run_direction(const KernelContext& ctx, const Inputs& in,
                                                int64_t d, const std::vector<int32_t>& qx,
                                                const U8Params& xp, float* y, float* yh,
                                                float* yc) const {
  const int64_t T = in.T, N = in.N, H = in.H, G = 4 * H, D = in.D;
  const bool reverse = spec_.direction == RnnDirection::kReverse || d == 1;
  std::vector<float> xw(static_cast<size_t>(T * N * G));
  integer_gemm(qx.data(), T * N, in.I, in.w, d, xp.scale, false, xw.data());
  std::vector<float> bias(static_cast<size_t>(G), 0.0f);
  if (in.b) {
    const float* b = in.b->data<float>() + d * 8 * H;
    for (int64_t g = 0; g < G; ++g) bias[static_cast<size_t>(g)] = b[g] + b[G + g];
  }
  std::vector<float> h(static_cast<size_t>(N * H), 0.0f), c(h.size(), 0.0f);
  if (in.h0) copy_bytes(h.data(), in.h0->data<float>() + d * N * H, h.size() * sizeof(float));
  if (in.c0) copy_bytes(c.data(), in.c0->data<float>() + d * N * H, c.size() * sizeof(float));
  std::vector<int64_t> len(static_cast<size_t>(N), T);
  for (int64_t n = 0; in.seq && n < N; ++n)
    len[static_cast<size_t>(n)] = in.seq->data<int32_t>()[n];
  std::vector<float> gates(static_cast<size_t>(N * G));
  std::vector<int32_t> qh(static_cast<size_t>(N * H));
  // A row past its own length holds h = 0 from the step after its last one on (ONNX Runtime
  // reads the previous h from Y, which is zero there): that 0 takes part in the batch's h
  // range, so it is kept rather than the row's final state. Y_h and Y_c keep the final state.
  const int64_t steps = len.empty() ? 0 : *std::max_element(len.begin(), len.end());
  std::vector<float> fh(h.size(), 0.0f), fc(c.size(), 0.0f);
  for (int64_t s = 0; s < steps; ++s) {
    RECUR_RETURN_IF_ERROR(ctx.check_cancelled("time step", s));
    // The whole batch's state is quantized with one scale, as ONNX Runtime does on one thread.
    const U8Params hp = u8_params(h.data(), N * H);
    quantize_u8(h.data(), N * H, hp, qh.data());
    for (int64_t n = 0; n < N; ++n) {
      const int64_t l = len[static_cast<size_t>(n)];
      const int64_t t = reverse && s < l ? l - 1 - s : s;  // past l: padding, unused
      copy_bytes(gates.data() + n * G, xw.data() + (t * N + n) * G,
                 static_cast<size_t>(G) * sizeof(float));
    }
    integer_gemm(qh.data(), N, H, in.r, d, hp.scale, true, gates.data());
    for (int64_t n = 0; n < N; ++n) {
      const int64_t l = len[static_cast<size_t>(n)];
      const int64_t t = reverse && s < l ? l - 1 - s : s;
      float* g = gates.data() + n * G;
      for (int64_t j = 0; j < G; ++j) g[j] += bias[static_cast<size_t>(j)];
      if (s >= l) {
        std::fill(h.begin() + n * H, h.begin() + (n + 1) * H, 0.0f);
        continue;
      }
      cell(in, d, g, c.data() + n * H, h.data() + n * H);
      copy_bytes(y + ((t * D + d) * N + n) * H, h.data() + n * H,
                 static_cast<size_t>(H) * sizeof(float));
      if (s == l - 1) {
        copy_bytes(fh.data() + n * H, h.data() + n * H, static_cast<size_t>(H) * sizeof(float));
        copy_bytes(fc.data() + n * H, c.data() + n * H, static_cast<size_t>(H) * sizeof(float));
      }
    }
  }
  copy_bytes(yh + d * N * H, fh.data(), fh.size() * sizeof(float));
  copy_bytes(yc + d * N * H, fc.data(), fc.size() * sizeof(float));
  return ok_status();
}

}  // namespace

void register_dynamic_quantize_lstm(Registrar& r) {
  r.add({.op_type = "DynamicQuantizeLSTM",
         .domain = "com.microsoft",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(RnnSpec spec, parse_quantized_lstm(ctx.node()));
           return std::unique_ptr<Kernel>(new DynamicQuantizeLstmKernel(std::move(spec)));
         }},
        infer_quantized_lstm);
}

}  // namespace recur::reference
