// The cuDNN RNN kernel for ONNX LSTM, GRU and RNN nodes.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::cuda {

void register_cudnn_rnn_kernels(KernelRegistry& r);

// Whether cuDNN can compute `node` exactly; a decline names the attribute that stops it.
// Pure host code: --plan-only uses it on machines without a GPU.
Claim cudnn_rnn_claim(const Node& node, const Graph& graph);
// The same for a fused recur::StackedRNN: every layer as cudnn_rnn_claim sees it, run as one
// call with numLayers > 1.
Claim cudnn_stacked_rnn_claim(const Node& node, const Graph& graph);

}  // namespace recur::cuda
