// The nn/ category of the oneDNN provider: one registration function per operator file.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::onednn {

void register_matmul(KernelRegistry& r);               // matmul.cc: MatMul
void register_gemm(KernelRegistry& r);                 // gemm.cc: Gemm
void register_batch_normalization(KernelRegistry& r);  // batch_normalization.cc
void register_conv(KernelRegistry& r);                 // conv.cc: Conv
void register_conv_transpose(KernelRegistry& r);       // conv_transpose.cc: ConvTranspose
void register_einsum(KernelRegistry& r);               // einsum.cc: Einsum of two operands
void register_layer_normalization(KernelRegistry& r);  // layer_normalization.cc
void register_pooling(KernelRegistry& r);              // pool.cc: MaxPool, AveragePool, Global*Pool
void register_resize(KernelRegistry& r);               // resize.cc: Resize (linear, nearest)
void register_softmax(KernelRegistry& r);              // softmax.cc: Softmax, LogSoftmax

// Whether a chain of the blocking pass (ExecutionProvider::channels_last_chain) runs NHWC, where
// oneDNN's brgconv takes its convolutions (conv.cc).
bool chain_runs_channels_last(const std::vector<const Node*>& chain, const Graph& g);
// Whether it pools: recur's blocked pools (nn/small_pool.h) run nChw16c, and a channels-last
// pool would run on oneDNN's, whose max pool treats NaN otherwise.
bool chain_has_pool(const std::vector<const Node*>& chain);

}  // namespace recur::onednn
