// GRU (ONNX gate order z,r,h), linear_before_reset 0 and 1, every opset.
#include "providers/reference/common/gemm.h"
#include "providers/reference/rnn/rnn_common.h"

namespace recur::reference::rnn {

namespace {

// One step over the active rows:
//   z = f(Xz + Hz),  r = f(Xr + Hr),
//   h~ = g(Xh + (r*H_{t-1}) Rh^T + Rbh)     linear_before_reset=0 (Rbh folded into Xh)
//   h~ = g(Xh + r*(H_{t-1} Rh^T + Rbh))     linear_before_reset=1
//   H_t = (1-z)*h~ + z*H_{t-1}.
// clip bounds each gate's whole pre-activation.
template <class C>
void gru_step(const StepArgs<C>& a) {
  const RnnSpec& spec = *a.spec;
  const int64_t N = a.batch, H = a.hidden, GH = 3 * H;
  const bool lbr = spec.linear_before_reset;
  // Without linear_before_reset the h gate's recurrent product needs r first.
  gemm<C>(false, false, N, lbr ? GH : 2 * H, H, C(1), a.h, H, a.rt, GH, C(0), a.gates, GH);
  const RnnActivation& act_f = spec.activation(a.dir, 0);
  const RnnActivation& act_g = spec.activation(a.dir, 1);
  const bool clip = spec.clip.has_value();
  const C bound = clip ? static_cast<C>(*spec.clip) : C(0);
  for (int64_t n = 0; n < N; ++n) {
    if (!a.active[n]) continue;
    C* g = a.gates + n * GH;
    const C* xr = a.xw_rows[n];
    // z and r lie next to each other (kOnnxGruZ = 0, kOnnxGruR = 1) and share f.
    for (int64_t j = 0; j < 2 * H; ++j) g[j] += xr[j];
    if (clip) clip_values(g, 2 * H, bound);
    activate(act_f, g, 2 * H);
    const C* r = g + kOnnxGruR * H;
    const C* hs = a.h + n * H;
    if (!lbr) {
      C* rh = a.scratch + n * H;
      for (int64_t j = 0; j < H; ++j) rh[j] = r[j] * hs[j];
      continue;
    }
    C* gh = g + kOnnxGruH * H;
    const C* xh = xr + kOnnxGruH * H;
    for (int64_t j = 0; j < H; ++j) gh[j] = xh[j] + r[j] * (gh[j] + (a.rbh ? a.rbh[j] : C(0)));
    if (clip) clip_values(gh, H, bound);
    activate(act_g, gh, H);
  }
  if (!lbr) {
    // Rows that are not active hold stale but finite values; their results are not used.
    gemm<C>(false, false, N, H, H, C(1), a.scratch, H, a.rt + kOnnxGruH * H, GH, C(0),
            a.gates + kOnnxGruH * H, GH);
    for (int64_t n = 0; n < N; ++n) {
      if (!a.active[n]) continue;
      C* gh = a.gates + n * GH + kOnnxGruH * H;
      const C* xh = a.xw_rows[n] + kOnnxGruH * H;
      for (int64_t j = 0; j < H; ++j) gh[j] += xh[j];
      if (clip) clip_values(gh, H, bound);
      activate(act_g, gh, H);
    }
  }
  for (int64_t n = 0; n < N; ++n) {
    if (!a.active[n]) continue;
    const C* z = a.gates + n * GH + kOnnxGruZ * H;
    const C* gh = a.gates + n * GH + kOnnxGruH * H;
    C* hs = a.h + n * H;
    for (int64_t j = 0; j < H; ++j) hs[j] = (C(1) - z[j]) * gh[j] + z[j] * hs[j];
  }
}

}  // namespace

CellOps gru_cell_ops() { return CellOps{&gru_step<float>, &gru_step<double>}; }

void register_gru(Registrar& r) { register_rnn_op(r, "GRU"); }

}  // namespace recur::reference::rnn
