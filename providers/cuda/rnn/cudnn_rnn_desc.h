// cuDNN RNN descriptors for the cudnn kernel: the configuration they are built from, owning
// handles, and the data descriptors that carry a run's sequence lengths.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "converters/cudnn_weights.h"
#include "recur/dtype.h"
#include "runtime/core/status.h"

namespace recur::cuda {

struct RnnDescDeleter {
  void operator()(cudnnRNNDescriptor_t d) const { cudnnDestroyRNNDescriptor(d); }
};
struct RnnDataDescDeleter {
  void operator()(cudnnRNNDataDescriptor_t d) const { cudnnDestroyRNNDataDescriptor(d); }
};
struct TensorDescDeleter {
  void operator()(cudnnTensorDescriptor_t d) const { cudnnDestroyTensorDescriptor(d); }
};
using RnnDesc = std::unique_ptr<std::remove_pointer_t<cudnnRNNDescriptor_t>, RnnDescDeleter>;
using RnnDataDesc =
    std::unique_ptr<std::remove_pointer_t<cudnnRNNDataDescriptor_t>, RnnDataDescDeleter>;
using TensorDesc =
    std::unique_ptr<std::remove_pointer_t<cudnnTensorDescriptor_t>, TensorDescDeleter>;

Result<TensorDesc> new_tensor_desc();

// Everything cudnnSetRNNDescriptor_v8 takes, but the algorithm.
struct RnnConfig {
  CudnnRnnGeometry geometry;
  bool relu = false;  // RNN cell: CUDNN_RNN_RELU instead of CUDNN_RNN_TANH
  DType dtype = DType::kFloat32;
  bool tf32 = false;

  cudnnDataType_t data_type() const {
    return dtype == DType::kFloat16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  }
  size_t elem_size() const { return dtype == DType::kFloat16 ? 2 : 4; }
};

// The raw status, so that callers can tell "not supported" (a persistent algorithm) apart.
// `handle` (the calling thread's device) sets up the no-dropout descriptor of stacked layers.
cudnnStatus_t set_rnn_desc(cudnnRNNDescriptor_t d, const RnnConfig& c, cudnnRNNAlgo_t algo,
                           cudnnHandle_t handle);
Result<RnnDesc> make_rnn_desc(const RnnConfig& c, cudnnRNNAlgo_t algo, cudnnHandle_t handle);

// Padded unpacked IO: SEQ_MAJOR_UNPACKED for layout 0, BATCH_MAJOR_UNPACKED for layout 1.
Status set_data_desc(cudnnRNNDataDescriptor_t d, const RnnConfig& c, int layout, int64_t T,
                     int64_t N, int64_t V, const int32_t* lengths);

}  // namespace recur::cuda
