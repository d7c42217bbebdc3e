// RNN (the simple recurrent cell), every opset.
#include <algorithm>

#include "providers/reference/common/gemm.h"
#include "providers/reference/rnn/rnn_common.h"

namespace recur::reference::rnn {

namespace {

// One step over the active rows: H_t = f(clip(Xi + Wbi + Rbi + H_{t-1} Ri^T)).
template <class C>
void rnn_step(const StepArgs<C>& a) {
  const RnnSpec& spec = *a.spec;
  const int64_t N = a.batch, H = a.hidden;
  gemm<C>(false, false, N, H, H, C(1), a.h, H, a.rt, H, C(0), a.gates, H);
  const RnnActivation& act_f = spec.activation(a.dir, 0);
  const bool clip = spec.clip.has_value();
  const C bound = clip ? static_cast<C>(*spec.clip) : C(0);
  for (int64_t n = 0; n < N; ++n) {
    if (!a.active[n]) continue;
    C* g = a.gates + n * H;
    const C* xr = a.xw_rows[n];
    for (int64_t j = 0; j < H; ++j) g[j] += xr[j];
    if (clip) clip_values(g, H, bound);
    activate(act_f, g, H);
    std::copy(g, g + H, a.h + n * H);
  }
}

}  // namespace

CellOps rnn_cell_ops() { return CellOps{&rnn_step<float>, &rnn_step<double>}; }

void register_rnn(Registrar& r) { register_rnn_op(r, "RNN"); }

}  // namespace recur::reference::rnn
