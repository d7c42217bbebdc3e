// recur::StackedRNN, the internal node that runtime/engine/optimize's stacked RNN fusion makes from
// a chain of single-layer ONNX LSTM, GRU or RNN nodes joined only by the exporter's reshaping glue.
// cuDNN runs it as one call with numLayers > 1; the reference provider runs it layer by layer with
// its own RNN kernel, which is what makes "fusion on and off give the same outputs" testable on the
// CPU.
//
//   inputs:  X, sequence_lens, then per layer l: W_l, R_l, B_l, initial_h_l, initial_c_l
//   outputs: Y (the last layer's), then per layer l: Y_h_l, Y_c_l
//   attributes: the layers' own (equal for every layer), plus cell ("LSTM", "GRU" or "RNN"),
//   num_layers and onnx_opset (the layers' opset).
//
// Layer l > 0 reads layer l-1's Y [T,D,N,H] as [T,N,D*H] (Squeeze of axis 1, or for D = 2 the
// Transpose(0,2,1,3) + Reshape(0,0,-1) that exporters emit). Only layout 0, no peepholes.
#pragma once

#include <cstddef>

#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur {

inline constexpr const char* kStackedRnnDomain = "recur";
inline constexpr const char* kStackedRnnOp = "StackedRNN";
inline constexpr size_t kStackedInputsPerLayer = 5;
inline constexpr size_t kStackedOutputsPerLayer = 2;

// Position of a layer's W, R, B, initial_h or initial_c (`which`: kRnnW, kRnnR, kRnnB,
// kRnnInitialH, kRnnInitialC) among the fused node's inputs.
size_t stacked_input(int layer, RnnInput which);
// Position of a layer's Y_h or Y_c (`which`: kRnnYh, kRnnYc) among the fused node's outputs.
size_t stacked_output(int layer, RnnOutput which);

struct StackedRnnSpec {
  RnnSpec spec;  // every layer's attributes
  int num_layers = 0;
  int onnx_opset = 0;
};
Result<StackedRnnSpec> parse_stacked_rnn(const Node& fused);

// The single-layer ONNX node for layer l: the cell op with the layers' attributes. Its inputs
// are the fused node's (W_l, R_l, B_l, sequence_lens, initial_h_l, initial_c_l; X only for
// layer 0, kNoValue otherwise) and its outputs Y (kNoValue), Y_h_l and Y_c_l.
Node stacked_layer_node(const Node& fused, int layer);

// The fused node, from the layer nodes (in order) of one chain. Inputs and outputs are the
// layers' own values; the glue between them is left for the caller to remove.
Node make_stacked_rnn_node(const std::vector<const Node*>& layers, std::string name);

// Shape rule: Y [T,D,N,H], each Y_h_l and Y_c_l [D,N,H]; checks each layer's W against the
// input size it reads (I, then D*H).
Status infer_stacked_rnn(InferContext& ctx);

}  // namespace recur
