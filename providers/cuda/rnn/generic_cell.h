// The cuda-generic RNN's cell math and per-element index arithmetic, as host/device functions:
// the CUDA kernels (generic_rnn_kernels.cu) call them once per thread, and the CPU tests call
// the very same functions in loops (generic_rnn_plan.h's CPU backend) against the reference
// provider and the float64 oracle, for every activation, clip, peepholes, input_forget, both
// GRU variants, sequence lengths, directions and layouts.
//
// Layouts (C is the compute type: float for float16/float32, double for float64):
//   xw   [D][T*N][G*H]  input projection X W^T, rows in X's order (layout 0: t*N+n; 1: n*T+t)
//   rg   [D][N][G*H]    recurrent product of this step, H_{t-1} R^T
//   h, c [D][N][H]      states, updated in place by active rows only
//   aux  [D][N][H]      GRU linear_before_reset=0: r*H_{t-1}, the input of the second GEMM
//   bias [D][G*H]       Wb+Rb per gate, except the GRU linear_before_reset=1 h gate: Wbh only
//   rbh  [D][H]         GRU linear_before_reset=1: Rbh (multiplied by r)
//   peep [D][3H]        LSTM peepholes i,o,f
// Gate order is ONNX's (LSTM i,o,f,c; GRU z,r,h).
#pragma once

#include <math.h>

#include <cstdint>

#include "providers/cuda/rnn/rnn_index.h"

namespace recur::cuda::cell {

// RnnActivation::Kind's values, in the same order.
enum ActKind : int32_t {
  kRelu = 0,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Act {
  int32_t kind = kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
};

enum CellKind : int32_t { kLstm = 0, kGru = 1, kRnn = 2 };

// Everything about the cell; passed to kernels by value.
struct CellParams {
  int32_t cell = kLstm;
  int32_t direction = 0;  // 0 forward, 1 reverse, 2 bidirectional
  int32_t layout = 0;
  int32_t has_clip = 0;
  float clip = 0.0f;
  int32_t input_forget = 0;
  int32_t linear_before_reset = 0;
  Act act[2][3];  // per direction: LSTM f,g,h; GRU f,g; RNN f
  int64_t T = 0, N = 0, H = 0, D = 1;

  RECUR_HD int64_t gates() const { return cell == kLstm ? 4 : cell == kGru ? 3 : 1; }
  RECUR_HD bool reversed(int64_t d) const { return direction == 1 || (direction == 2 && d == 1); }
};

RECUR_HD inline float m_exp(float x) { return expf(x); }
RECUR_HD inline double m_exp(double x) { return exp(x); }
RECUR_HD inline float m_tanh(float x) { return tanhf(x); }
RECUR_HD inline double m_tanh(double x) { return tanh(x); }
RECUR_HD inline float m_log1p(float x) { return log1pf(x); }
RECUR_HD inline double m_log1p(double x) { return log1p(x); }
RECUR_HD inline float m_expm1(float x) { return expm1f(x); }
RECUR_HD inline double m_expm1(double x) { return expm1(x); }
RECUR_HD inline float m_abs(float x) { return fabsf(x); }
RECUR_HD inline double m_abs(double x) { return fabs(x); }

// The same formulas as the reference provider's activate().
template <class C>
RECUR_HD C activate(const Act& a, C x) {
  const C alpha = static_cast<C>(a.alpha), beta = static_cast<C>(a.beta);
  const C zero(0), one(1);
  switch (a.kind) {
    case kRelu:
      return x > zero ? x : zero;
    case kTanh:
      return m_tanh(x);
    case kSigmoid:
      return one / (one + m_exp(-x));
    case kAffine:
      return alpha * x + beta;
    case kLeakyRelu:
      return x >= zero ? x : alpha * x;
    case kThresholdedRelu:
      return x > alpha ? x : zero;
    case kScaledTanh:
      return alpha * m_tanh(beta * x);
    case kHardSigmoid: {
      const C v = alpha * x + beta;
      return v < zero ? zero : (v > one ? one : v);
    }
    case kElu:
      return x >= zero ? x : alpha * m_expm1(x);
    case kSoftsign:
      return x / (one + m_abs(x));
    case kSoftplus:
      return x > zero ? x + m_log1p(m_exp(-x)) : m_log1p(m_exp(x));
  }
  return x;
}

template <class C>
RECUR_HD C clip_to(const CellParams& p, C x) {
  if (!p.has_clip) return x;
  const C b = static_cast<C>(p.clip);
  return x < -b ? -b : (x > b ? b : x);
}

// --- Index arithmetic ------------------------------------------------------------------------

// Element e of [D][N][H]: its direction, batch row and hidden unit.
struct Dnj {
  int64_t d, n, j;
};
RECUR_HD inline Dnj split_dnj(int64_t e, int64_t N, int64_t H) {
  return {e / (N * H), (e / H) % N, e % H};
}

// The length of sequence n, clamped to [0, T] so that a bad value cannot index out of range.
RECUR_HD inline int64_t seq_len(const int32_t* lens, int64_t n, int64_t T) {
  if (!lens) return T;
  const int64_t l = lens[n];
  return l < 0 ? 0 : (l > T ? T : l);
}

// The time step that step s of direction d reads for a sequence of length len: forward s,
// backward len-1-s (each sequence runs backward from its own last valid step).
RECUR_HD inline int64_t step_time(const CellParams& p, int64_t d, int64_t s, int64_t len) {
  return p.reversed(d) ? len - 1 - s : s;
}

// Row of (t, n) in X's order.
RECUR_HD inline int64_t x_row(const CellParams& p, int64_t t, int64_t n) {
  return rnn_index::row(p.layout, t, n, p.T, p.N);
}

// Offset of Y[t, d, n, j]: [T,D,N,H] (layout 0) or [N,T,D,H] (layout 1).
RECUR_HD inline int64_t y_offset(const CellParams& p, int64_t t, int64_t d, int64_t n, int64_t j) {
  return p.layout == 0 ? ((t * p.D + d) * p.N + n) * p.H + j : ((n * p.T + t) * p.D + d) * p.H + j;
}

// Offset of state[d, n, j]: [D,N,H] (layout 0) or [N,D,H] (layout 1).
RECUR_HD inline int64_t state_offset(const CellParams& p, int64_t d, int64_t n, int64_t j) {
  return p.layout == 0 ? (d * p.N + n) * p.H + j : (n * p.D + d) * p.H + j;
}

// --- Per-element steps -----------------------------------------------------------------------

// Device (or host) pointers of one step. T is the storage type of Y (and X), C the compute type.
template <class T, class C>
struct StepBuffers {
  const C* xw = nullptr;
  const C* rg = nullptr;
  // rg's layout: gate g of element (d, n, j) is rg[((d - rg_d0) * N + n) * rg_row + g * rg_gate +
  // j - rg_j0]. [D][N][G*H] where rg_row is 0 (G*H, H and 0 then): a block of the grid kernel
  // keeps only its own units' columns, in shared memory.
  int64_t rg_row = 0, rg_gate = 0, rg_j0 = 0, rg_d0 = 0;
  const C* bias = nullptr;
  const C* rbh = nullptr;
  const C* peep = nullptr;
  C* h = nullptr;
  C* c = nullptr;
  C* aux = nullptr;
  const int32_t* lens = nullptr;  // [N], or null: every length is T
  T* y = nullptr;                 // ONNX Y, or null
};

// The offset of gate g of element (d, n, j) in rg.
template <class T, class C>
RECUR_HD int64_t rg_offset(const CellParams& p, const StepBuffers<T, C>& b, int64_t d, int64_t n,
                           int64_t g, int64_t j) {
  if (b.rg_row == 0) return (d * p.N + n) * p.gates() * p.H + g * p.H + j;
  return ((d - b.rg_d0) * p.N + n) * b.rg_row + g * b.rg_gate + j - b.rg_j0;
}

template <class T, class C>
RECUR_HD T to_storage(C v) {
  return static_cast<T>(v);
}

// Where element `at` stands at step s: active (s < len) with its time t, or not.
struct Where {
  Dnj at;
  int64_t len, t;
  bool active;
};
template <class T, class C>
RECUR_HD Where locate(const CellParams& p, const StepBuffers<T, C>& b, int64_t s, Dnj at) {
  Where w;
  w.at = at;
  w.len = seq_len(b.lens, w.at.n, p.T);
  w.active = s < w.len;
  w.t = w.active ? step_time(p, w.at.d, s, w.len) : s;
  return w;
}

// The gate pre-activation sum x W^T + bias + h R^T for gate g of element (d, n, j) at time t.
template <class T, class C>
RECUR_HD C gate_sum(const CellParams& p, const StepBuffers<T, C>& b, const Where& w, int64_t g) {
  const int64_t GH = p.gates() * p.H;
  const int64_t k = g * p.H + w.at.j;
  C v = b.xw[(w.at.d * p.T * p.N + x_row(p, w.t, w.at.n)) * GH + k] +
        b.rg[rg_offset(p, b, w.at.d, w.at.n, g, w.at.j)];
  if (b.bias) v += b.bias[w.at.d * GH + k];
  return v;
}

// Past a sequence's length, its Y is zero. Step s writes that zero at time s (s >= len): over
// the T steps every padded Y element is written exactly once, in either direction.
template <class T, class C>
RECUR_HD void write_padding(const CellParams& p, const StepBuffers<T, C>& b, const Where& w) {
  if (b.y) b.y[y_offset(p, w.t, w.at.d, w.at.n, w.at.j)] = to_storage<T, C>(C(0));
}

// LSTM: i = f(Xi+Hi+Pi*C_{t-1}), f = f(Xf+Hf+Pf*C_{t-1}) or 1-i, c~ = g(Xc+Hc),
// C_t = f*C_{t-1} + i*c~, o = f(Xo+Ho+Po*C_t), H_t = o*h(C_t); clip bounds each whole
// pre-activation (peephole term included).
template <class T, class C>
RECUR_HD void lstm_element(const CellParams& p, const StepBuffers<T, C>& b, int64_t s, Dnj at) {
  const Where w = locate(p, b, s, at);
  if (!w.active) return write_padding(p, b, w);
  const int64_t H = p.H, d = w.at.d, j = w.at.j;
  const Act* act = p.act[d];
  const int64_t si = (d * p.N + w.at.n) * H + j;
  const C c_prev = b.c[si];
  const C* peep = b.peep ? b.peep + d * 3 * H : nullptr;
  C ip = gate_sum(p, b, w, 0);
  if (peep) ip += peep[j] * c_prev;
  const C i = activate(act[0], clip_to(p, ip));
  C f;
  if (p.input_forget) {
    f = C(1) - i;
  } else {
    C fp = gate_sum(p, b, w, 2);
    if (peep) fp += peep[2 * H + j] * c_prev;
    f = activate(act[0], clip_to(p, fp));
  }
  const C g = activate(act[1], clip_to(p, gate_sum(p, b, w, 3)));
  const C c_new = f * c_prev + i * g;
  C op = gate_sum(p, b, w, 1);
  if (peep) op += peep[H + j] * c_new;
  const C o = activate(act[0], clip_to(p, op));
  const C h_new = o * activate(act[2], c_new);
  b.c[si] = c_new;
  b.h[si] = h_new;
  if (b.y) b.y[y_offset(p, w.t, d, w.at.n, j)] = to_storage<T, C>(h_new);
}

// RNN: H_t = f(clip(Xi + Hi + Wbi + Rbi)).
template <class T, class C>
RECUR_HD void rnn_element(const CellParams& p, const StepBuffers<T, C>& b, int64_t s, Dnj at) {
  const Where w = locate(p, b, s, at);
  if (!w.active) return write_padding(p, b, w);
  const int64_t si = (w.at.d * p.N + w.at.n) * p.H + w.at.j;
  const C h_new = activate(p.act[w.at.d][0], clip_to(p, gate_sum(p, b, w, 0)));
  b.h[si] = h_new;
  if (b.y) b.y[y_offset(p, w.t, w.at.d, w.at.n, w.at.j)] = to_storage<T, C>(h_new);
}

// GRU, linear_before_reset=1: h~ = g(clip(Xh + Wbh + r*(Hh + Rbh))), in one pass.
// linear_before_reset=0, first pass (`phase` 0): z and r, then aux = r*H_{t-1}, the input of
// the GEMM that gives (r*H_{t-1}) Rh^T into rg's h-gate columns; z is kept in rg's z column.
// Second pass (`phase` 1): h~ = g(clip(Xh + Wbh + Rbh + (r*H_{t-1}) Rh^T)).
// Both: H_t = (1-z)*h~ + z*H_{t-1}.
template <class T, class C>
RECUR_HD void gru_element(const CellParams& p, const StepBuffers<T, C>& b, int64_t s, Dnj at,
                          int phase) {
  const Where w = locate(p, b, s, at);
  if (!w.active) {
    // The second product reads every row of aux, this one's too: zeros keep unwritten memory
    // out of it (compute-sanitizer's initcheck), though the row's h columns go unused.
    if (!p.linear_before_reset && phase == 0) b.aux[(w.at.d * p.N + w.at.n) * p.H + w.at.j] = C(0);
    if (phase == (p.linear_before_reset ? 0 : 1)) write_padding(p, b, w);
    return;
  }
  const int64_t H = p.H, d = w.at.d, j = w.at.j, GH = 3 * H;
  const Act* act = p.act[d];
  const int64_t si = (d * p.N + w.at.n) * H + j;
  C z;
  C hh;
  if (p.linear_before_reset) {
    z = activate(act[0], clip_to(p, gate_sum(p, b, w, 0)));
    const C r = activate(act[0], clip_to(p, gate_sum(p, b, w, 1)));
    const int64_t k = 2 * H + j;
    C xh = b.xw[(d * p.T * p.N + x_row(p, w.t, w.at.n)) * GH + k];
    if (b.bias) xh += b.bias[d * GH + k];
    const C rb = b.rbh ? b.rbh[d * H + j] : C(0);
    hh = activate(act[1], clip_to(p, xh + r * (b.rg[rg_offset(p, b, d, w.at.n, 2, j)] + rb)));
  } else if (phase == 0) {
    z = activate(act[0], clip_to(p, gate_sum(p, b, w, 0)));
    const C r = activate(act[0], clip_to(p, gate_sum(p, b, w, 1)));
    b.aux[si] = r * b.h[si];
    // rg is this step's scratch: its z column keeps z for the second pass.
    const_cast<C*>(b.rg)[rg_offset(p, b, d, w.at.n, 0, j)] = z;
    return;
  } else {
    z = b.rg[rg_offset(p, b, d, w.at.n, 0, j)];
    hh = activate(act[1], clip_to(p, gate_sum(p, b, w, 2)));
  }
  const C h_new = (C(1) - z) * hh + z * b.h[si];
  b.h[si] = h_new;
  if (b.y) b.y[y_offset(p, w.t, d, w.at.n, j)] = to_storage<T, C>(h_new);
}

// --- Before and after the steps --------------------------------------------------------------

// h, c [D][N][H] from initial_h / initial_c (ONNX state layout), or zeros.
template <class T, class C>
RECUR_HD void init_element(const CellParams& p, const T* h0, const T* c0, C* h, C* c, int64_t e) {
  const Dnj a = split_dnj(e, p.N, p.H);
  const int64_t so = state_offset(p, a.d, a.n, a.j);
  h[e] = h0 ? static_cast<C>(h0[so]) : C(0);
  if (c) c[e] = c0 ? static_cast<C>(c0[so]) : C(0);
}

// Y_h / Y_c: the state after each sequence's last valid step; zeros for a length of 0.
template <class T, class C>
RECUR_HD void final_element(const CellParams& p, const int32_t* lens, const C* h, const C* c, T* yh,
                            T* yc, int64_t e) {
  const Dnj a = split_dnj(e, p.N, p.H);
  const bool empty = seq_len(lens, a.n, p.T) == 0;
  const int64_t so = state_offset(p, a.d, a.n, a.j);
  if (yh) yh[so] = to_storage<T, C>(empty ? C(0) : h[e]);
  if (yc) yc[so] = to_storage<T, C>(empty ? C(0) : c[e]);
}

// Packs B [D][2*G*H] (ONNX) into bias [D][G*H] and rbh [D][H]; element e of [D][G*H].
template <class T, class C>
RECUR_HD void pack_bias_element(const CellParams& p, const T* B, C* bias, C* rbh, int64_t e) {
  const int64_t GH = p.gates() * p.H;
  const int64_t d = e / GH, k = e % GH;
  const C wb = static_cast<C>(B[d * 2 * GH + k]);
  const C rb = static_cast<C>(B[d * 2 * GH + GH + k]);
  const bool separate = p.cell == kGru && p.linear_before_reset && k >= 2 * p.H;
  bias[e] = separate ? wb : wb + rb;
  if (separate && rbh) rbh[d * p.H + (k - 2 * p.H)] = rb;
}

}  // namespace recur::cuda::cell
