// The weight-space map as cuDNN itself reports it, for the GPU test that checks
// canonical_cudnn_weight_map. No CUDA types in the interface.
#pragma once

#include "converters/cudnn_weights.h"
#include "recur/dtype.h"

namespace recur::cuda {

// Creates an RNN descriptor for `geometry` (float32 or float16) on `device` and reads every
// block's offset and shape with cudnnGetRNNWeightParams.
Result<CudnnWeightMap> query_cudnn_weight_map(const CudnnRnnGeometry& geometry, DType dtype,
                                              int device);

}  // namespace recur::cuda
