// The oneDNN RNN kernel shared by LSTM, GRU and RNN. What differs per cell (the claim rules
// and the primitive descriptor) lives in lstm.cc, gru.cc and rnn.cc; the shared claims in
// rnn_claim.cc, and the kernel itself in rnn_kernel.h.
//
// Every direction runs as its own unidirectional primitive that writes straight into ONNX's
// Y, Y_h and Y_c through strided memory descriptors, so neither layout=1 nor a bidirectional
// Y needs a reorder. Sequence lengths that are not all T run as time segments over the rows
// still active (sorted by length), chaining dst_iter into src_iter; the reverse direction
// reverses each sequence within its own length.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include <dnnl.hpp>

#include "runtime/provider/execution_provider.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::onednn {

// Writes direction d's W (layer) or R of an RNN node, ONNX's [G*H][in], to a layout of the
// caller's: element k of row s to dst[row_at[s] + k * k_stride] (none where row_at[s] < 0).
// Where a kernel that packed them keeps the node's only copy (row_team.h).
using OnnxWeightsSource = std::function<void(int64_t d, bool layer, std::span<const int64_t> row_at,
                                             int64_t k_stride, float* dst)>;

// One run's X, states and outputs as ONNX lays them out (layout 0 or 1), with the offsets of
// (t, n) in X, of (t, d, n) in Y and of (d, n) in the states. Absent inputs and outputs are
// null. The primitive kernel (rnn_kernel.h, RunIo) and the small-cell kernels (small_cell.h,
// small::Io) each add what their runs need.
struct RnnBuffers {
  int64_t T = 0, N = 0, I = 0, H = 0, D = 1;
  bool l0 = true;
  bool x_l0 = true;  // X's own layout: 0 also where a layout-1 run copied it ([T, N, I])
  const float* x = nullptr;
  const float* h0 = nullptr;
  const float* c0 = nullptr;
  float* y = nullptr;
  float* yh = nullptr;
  float* yc = nullptr;
  const float* x_at(int64_t t, int64_t n) const { return x + (x_l0 ? t * N + n : n * T + t) * I; }
  int64_t y_off(int64_t t, int64_t d, int64_t n) const {
    return (l0 ? (t * D + d) * N + n : (n * T + t) * D + d) * H;
  }
  int64_t s_off(int64_t d, int64_t n) const { return (l0 ? d * N + n : n * D + d) * H; }
  // Y, and Y_h and (for an LSTM) Y_c where the node asks for them, in the run's layout.
  Status allocate_outputs(KernelContext& ctx, bool lstm) {
    const Shape y_shape = l0 ? Shape{T, D, N, H} : Shape{N, T, D, H};
    const Shape s_shape = l0 ? Shape{D, N, H} : Shape{N, D, H};
    RECUR_ASSIGN_OR_RETURN(Tensor * yt, ctx.allocate_output(kRnnY, DType::kFloat32, y_shape));
    y = yt->data<float>();
    if (ctx.output_requested(kRnnYh)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYh, DType::kFloat32, s_shape));
      yh = t->data<float>();
    }
    if (lstm && ctx.output_requested(kRnnYc)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYc, DType::kFloat32, s_shape));
      yc = t->data<float>();
    }
    return ok_status();
  }
};

struct RnnDescs {
  dnnl::memory::desc src_layer, src_iter, src_iter_c;
  dnnl::memory::desc weights_layer, weights_iter, weights_peephole, bias;
  dnnl::memory::desc dst_layer, dst_iter, dst_iter_c;
};

// A created primitive and what its descriptor asked for.
struct RnnPd {
  dnnl::primitive primitive;
  dnnl::memory::desc weights_layer, weights_iter, scratchpad;
  std::string impl;  // impl_info_str(): "ref", "brgemm", ...
};

// What primitive descriptor `pd` asks for, with its primitive unless `make_primitive` is false
// (a query of the sizes only: no JIT code is generated).
template <class Prim>
RnnPd finish_rnn_pd(const typename Prim::primitive_desc& pd, bool make_primitive) {
  RnnPd out;
  out.weights_layer = pd.weights_layer_desc();
  out.weights_iter = pd.weights_iter_desc();
  out.scratchpad = pd.scratchpad_desc();
  out.impl = pd.impl_info_str();
  if (make_primitive) out.primitive = Prim(pd);
  return out;
}

// Per cell; each throws dnnl::error. `dir` picks direction `dir`'s activations.
RnnPd create_lstm_pd(const RnnSpec& spec, int dir, const RnnDescs& d, dnnl::rnn_direction direction,
                     const dnnl::primitive_attr& attr, bool make_primitive);
RnnPd create_gru_pd(const RnnSpec& spec, int dir, const RnnDescs& d, dnnl::rnn_direction direction,
                    const dnnl::primitive_attr& attr, bool make_primitive);
RnnPd create_vanilla_pd(const RnnSpec& spec, int dir, const RnnDescs& d,
                        dnnl::rnn_direction direction, const dnnl::primitive_attr& attr,
                        bool make_primitive);

// Why oneDNN's RNN primitives cannot compute the cell: a clip, activations they do not have
// (their LSTM and GRU are fixed to the defaults, their RNN has tanh, relu, sigmoid and leaky
// relu), alpha or beta beyond the leaky relu's; "" when they can.
std::string primitive_math_declined(const Node& node, const RnnSpec& spec);

// The claim of LSTM, GRU and RNN nodes (a KernelDef::settings_claim): X float32 and an input
// size above 0; a cell whose math the primitives lack (primitive_math_declined) is taken for
// recur's small-cell kernels, which run it at any size (small_cell.h), unless onednn.impl asks
// for the primitive or the weights are not constant (the claim then gives both reasons).
Claim claim_rnn(const Node& node, const Graph& graph, const ProviderOptions& options);

// The kernel factory for all three cells.
Result<std::unique_ptr<Kernel>> create_rnn_kernel(CompileContext& ctx);

}  // namespace recur::onednn
