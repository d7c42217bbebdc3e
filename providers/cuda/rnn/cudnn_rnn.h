// The cuDNN RNN kernel for ONNX LSTM, GRU and RNN nodes.
#pragma once

#include <string>

#include "providers/cuda/rnn/cudnn_rnn_plan.h"
#include "runtime/provider/execution_provider.h"

namespace recur::cuda {

void register_cudnn_rnn_kernels(KernelRegistry& r);

// Whether cuDNN can compute `node` exactly; a decline names the attribute that stops it.
// Pure host code: --plan-only uses it on machines without a GPU.
Claim cudnn_rnn_claim(const Node& node, const Graph& graph);
// The same for a fused recur::StackedRNN: every layer as cudnn_rnn_claim sees it, run as one
// call with numLayers > 1.
Claim cudnn_stacked_rnn_claim(const Node& node, const Graph& graph);

// Why cudnn leaves `node`, an LSTM, GRU or RNN it can run, to cuda-generic's grid kernel on the
// device `gpu` describes, or "" to keep it. On two H200s the grid kernel ran float32 shapes that
// cuDNN runs with its STANDARD algorithm 1.35x to 3.5x faster than cuDNN (docs/gpu-results.md),
// so cudnn leaves those: float32 X at a static batch of at most kGridAutoBatch, no persistent
// algorithm for the shape (persistent_candidates) or weights that are not constants, TF32 off,
// cuda-generic's grid kernel not switched off (`generic`) and its shape fitting the device
// (grid_shape). Pure host code: the CPU tests give it a device's traits.
std::string cudnn_rnn_grid_reason(const Node& node, const Graph& graph, const CudaOptions& cudnn,
                                  CudaOptions::Persistent generic, const GpuTraits& gpu);

}  // namespace recur::cuda
