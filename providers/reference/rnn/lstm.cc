// LSTM (ONNX gate order i,o,f,c; peepholes i,o,f), every opset.
#include "providers/reference/common/gemm.h"
#include "providers/reference/rnn/rnn_common.h"

namespace recur::reference::rnn {

namespace {

// One step over the active rows:
//   i = f(Xi + Hi + Pi*C_{t-1}),  f = f(Xf + Hf + Pf*C_{t-1}) (or 1 - i with input_forget),
//   c~ = g(Xc + Hc),  C_t = f*C_{t-1} + i*c~,  o = f(Xo + Ho + Po*C_t),  H_t = o*h(C_t).
// clip bounds each gate's whole pre-activation, bias and peephole included.
template <class C>
void lstm_step(const StepArgs<C>& a) {
  const RnnSpec& spec = *a.spec;
  const int64_t N = a.batch, H = a.hidden, GH = 4 * H;
  gemm<C>(false, false, N, GH, H, C(1), a.h, H, a.rt, GH, C(0), a.gates, GH);
  const RnnActivation& act_f = spec.activation(a.dir, 0);
  const RnnActivation& act_g = spec.activation(a.dir, 1);
  const RnnActivation& act_h = spec.activation(a.dir, 2);
  const bool clip = spec.clip.has_value();
  const C bound = clip ? static_cast<C>(*spec.clip) : C(0);
  const C* pi = a.p;
  const C* po = a.p ? a.p + H : nullptr;
  const C* pf = a.p ? a.p + 2 * H : nullptr;
  for (int64_t n = 0; n < N; ++n) {
    if (!a.active[n]) continue;
    C* g = a.gates + n * GH;
    const C* xr = a.xw_rows[n];
    for (int64_t j = 0; j < GH; ++j) g[j] += xr[j];
    C* gi = g + kOnnxLstmI * H;
    C* go = g + kOnnxLstmO * H;
    C* gf = g + kOnnxLstmF * H;
    C* gc = g + kOnnxLstmC * H;
    C* cs = a.c + n * H;
    C* hs = a.h + n * H;
    if (pi) {
      for (int64_t j = 0; j < H; ++j) gi[j] += pi[j] * cs[j];
    }
    if (clip) clip_values(gi, H, bound);
    activate(act_f, gi, H);
    if (spec.input_forget) {
      for (int64_t j = 0; j < H; ++j) gf[j] = C(1) - gi[j];
    } else {
      if (pf) {
        for (int64_t j = 0; j < H; ++j) gf[j] += pf[j] * cs[j];
      }
      if (clip) clip_values(gf, H, bound);
      activate(act_f, gf, H);
    }
    if (clip) clip_values(gc, H, bound);
    activate(act_g, gc, H);
    for (int64_t j = 0; j < H; ++j) cs[j] = gf[j] * cs[j] + gi[j] * gc[j];
    if (po) {
      for (int64_t j = 0; j < H; ++j) go[j] += po[j] * cs[j];
    }
    if (clip) clip_values(go, H, bound);
    activate(act_f, go, H);
    // c~ is spent: its space holds h(C_t).
    for (int64_t j = 0; j < H; ++j) gc[j] = cs[j];
    activate(act_h, gc, H);
    for (int64_t j = 0; j < H; ++j) hs[j] = go[j] * gc[j];
  }
}

}  // namespace

CellOps lstm_cell_ops() { return CellOps{&lstm_step<float>, &lstm_step<double>}; }

void register_lstm(Registrar& r) { register_rnn_op(r, "LSTM"); }

}  // namespace recur::reference::rnn
