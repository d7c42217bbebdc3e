// The GPU providers: `cudnn` (cuDNN's RNN for the LSTM, GRU and RNN nodes it can express, and
// the fused recur::StackedRNN as one multi-layer call) and `cuda-generic` (every LSTM, GRU and
// RNN with any attribute, and the glue operators: cuBLAS, cuDNN convolution and pooling, CUDA
// kernels). Neither header nor factory needs CUDA headers, so the session can include this in
// any build.
#pragma once

#include <memory>
#include <string>

#include "runtime/provider/execution_provider.h"

namespace recur {

// Settings (SessionOptions::set("cudnn.<key>", value)):
//   cudnn.device=N      the CUDA device (default 0)
//   cudnn.tf32=1        allow TF32 tensor-core math for float32 (default: exact FMA math)
//   cudnn.persistent=1  try cuDNN's persistent RNN algorithms for fixed-length batches, and
//                       fall back to STANDARD where cuDNN reports them not supported;
//                       auto (the default): only where one is known to be faster;
//                       small_h|static|dynamic: that one alone, else STANDARD
//   cudnn.defer_to_grid=0  keep on cudnn the float32 nodes it would run with STANDARD at a
//                       static batch up to 64; by default (1) it leaves them to cuda-generic's
//                       grid kernel where that is listed after it and fits the shape
//                       (cudnn_rnn_grid_reason in rnn/cudnn_rnn.h)
std::unique_ptr<ExecutionProvider> make_cudnn_provider();
// Settings: cuda-generic.device=N; cuda-generic.persistent=0|1|auto: every RNN step in one
// cooperative launch over the whole GPU (the grid kernel, generic_rnn_plan.h) instead of a GEMM
// and a gate launch per step, where the shape fits it; auto (the default) takes it for batches
// up to 64.
std::unique_ptr<ExecutionProvider> make_cuda_generic_provider();

}  // namespace recur
