// What the reference LSTM, GRU and RNN kernels share: the activation functions, the weights
// repacked for row-major GEMMs, input validation, the direction and sequence-length loop, and
// the layout of X, Y, Y_h and Y_c. Each cell (lstm.cc, gru.cc, rnn.cc) supplies only its step.
#pragma once

#include <cstdint>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"
#include "runtime/provider/kernel.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::reference::rnn {

// f(x) in place over n values. The switch is outside the loop so each case vectorises.
template <class C>
void activate(const RnnActivation& act, C* x, int64_t n);

// Clamps each value to [-clip, clip] (ONNX `clip`, applied to gate pre-activations).
template <class C>
void clip_values(C* x, int64_t n, C clip);

// One direction's step as a cell sees it. Row b of the state is updated only where active[b].
template <class C>
struct StepArgs {
  const RnnSpec* spec = nullptr;
  int dir = 0;
  int64_t batch = 0;   // N
  int64_t hidden = 0;  // H
  // The input projection (bias included) of the row each active sequence reads at this step,
  // [N] pointers to G*H values; null for inactive rows.
  const C* const* xw_rows = nullptr;
  const uint8_t* active = nullptr;  // [N]
  const C* rt = nullptr;            // [H, G*H]
  const C* rbh = nullptr;           // GRU lbr=1: [H], or null
  const C* p = nullptr;             // LSTM: [3H] i,o,f, or null
  C* h = nullptr;                   // [N, H] hidden state, updated in place
  C* c = nullptr;                   // LSTM: [N, H] cell state, updated in place
  C* gates = nullptr;               // scratch [N, G*H]
  C* scratch = nullptr;             // scratch [N, H]
};

// A cell's step, for each compute type. The step runs the recurrent GEMM over all N rows and
// then the gate loop over the active rows.
struct CellOps {
  void (*step_float)(const StepArgs<float>&) = nullptr;
  void (*step_double)(const StepArgs<double>&) = nullptr;
};

// Each cell's steps (lstm.cc, gru.cc, rnn.cc).
CellOps lstm_cell_ops();
CellOps gru_cell_ops();
CellOps rnn_cell_ops();

// Kernel definitions for every opset from 1 on, with infer_rnn as the shape rule.
void register_rnn_op(Registrar& r, const char* op_type);

// The reference kernel for an LSTM, GRU or RNN node (ctx.node()); used by register_rnn_op and
// by the layer-by-layer StackedRNN kernel.
Result<std::unique_ptr<Kernel>> create_rnn_kernel(CompileContext& ctx);

void register_lstm(Registrar& r);
void register_stacked_rnn(Registrar& r);
void register_gru(Registrar& r);
void register_rnn(Registrar& r);

}  // namespace recur::reference::rnn
