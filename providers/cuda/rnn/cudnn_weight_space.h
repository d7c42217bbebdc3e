// cuDNN's weight space for the cudnn kernel: where cuDNN wants each ONNX block, and filling it
// from ONNX W, R and B, once on the host for constant weights or on the device every run for
// weights that are graph inputs.
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "converters/cudnn_weights.h"
#include "providers/cuda/rnn/cudnn_rnn_desc.h"

namespace recur::cuda {

// The weight space's map, as cudnnGetRNNWeightParams reports it for `weight_space`.
Result<CudnnWeightMap> read_weight_map(cudnnHandle_t handle, cudnnRNNDescriptor_t desc,
                                       const RnnConfig& c, void* weight_space, size_t weight_bytes);

// Every layer's ONNX W, R and B in host memory (b[l] null: zero biases).
struct HostLayerWeights {
  std::vector<const void*> w, r, b;
};

// Repacks host weights and uploads them into the device weight space `space` of `bytes`.
Status fill_weight_space_from_host(const CudnnWeightPlan& plan, size_t elem_size,
                                   const HostLayerWeights& onnx, void* space, size_t bytes,
                                   int device);

// The device data of layer `layer`'s W, R or B, or null where the node has none.
using DeviceWeightSource = std::function<const void*(int layer, CudnnWeightCopy::Source)>;

// Zeroes the device weight space `space` of `bytes` and copies every block of the plan into
// it, device to device, ordered on `stream`.
Status fill_weight_space_on_device(const CudnnWeightPlan& plan, size_t elem_size,
                                   const DeviceWeightSource& source, void* space, size_t bytes,
                                   cudaStream_t stream);

}  // namespace recur::cuda
