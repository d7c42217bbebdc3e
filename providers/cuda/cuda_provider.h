// The GPU providers: `cudnn` (cuDNN's RNN for the LSTM, GRU and RNN nodes it can express) and
// `cuda-generic` (CUDA kernels for everything else; no kernels yet). Neither header nor
// factory needs CUDA headers, so the session can include this in any build.
#pragma once

#include <memory>
#include <string>

#include "runtime/provider/execution_provider.h"

namespace recur {

// Settings (SessionOptions::set("cudnn.<key>", value)):
//   cudnn.device=N      the CUDA device (default 0)
//   cudnn.tf32=1        allow TF32 tensor-core math for float32 (default: exact FMA math)
//   cudnn.persistent=1  try cuDNN's persistent RNN algorithms for fixed-length batches, and
//                       fall back to STANDARD where cuDNN reports them not supported
std::unique_ptr<ExecutionProvider> make_cudnn_provider();
// Settings: cuda-generic.device=N.
std::unique_ptr<ExecutionProvider> make_cuda_generic_provider();

}  // namespace recur
