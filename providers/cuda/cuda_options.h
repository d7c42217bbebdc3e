// The settings of the cudnn and cuda-generic providers, parsed once at configure().
#pragma once

#include "runtime/provider/provider_options.h"

namespace recur::cuda {

struct CudaOptions : ProviderOptions {
  // cuda-generic's kAuto takes the persistent kernel for small batches (generic_rnn.cc);
  // cudnn's (its default) a persistent algorithm for the shapes where one is known to be faster
  // (persistent_candidates in rnn/cudnn_rnn_plan.h). The last three are cudnn's only: that one
  // algorithm alone, STANDARD where cuDNN refuses it (to measure one against STANDARD).
  enum class Persistent { kOff, kOn, kAuto, kSmallH, kStatic, kDynamic };

  int device = 0;
  bool tf32 = false;  // cudnn only
  // cudnn only: leave float32 nodes that cuDNN would run with STANDARD to cuda-generic's grid
  // kernel where that fits (cudnn_rnn_grid_reason in rnn/cudnn_rnn.h).
  bool defer_to_grid = true;
  Persistent persistent = Persistent::kOff;
};

}  // namespace recur::cuda
