// cuda-generic's LSTM, GRU and RNN kernel: every ONNX attribute, on the GPU.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::cuda {

void register_generic_rnn_kernels(KernelRegistry& r);

// Float16, float32 and float64 with any attributes; pure host code (--plan-only uses it).
Claim generic_rnn_claim(const Node& node, const Graph& graph);

}  // namespace recur::cuda
