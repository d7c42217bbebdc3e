#include "providers/cuda/rnn/cudnn_rnn_desc.h"

#include <mutex>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_stream.h"

namespace recur::cuda {

Result<TensorDesc> new_tensor_desc() {
  cudnnTensorDescriptor_t d = nullptr;
  RECUR_CUDA_CHECK(cudnnCreateTensorDescriptor(&d));
  return TensorDesc(d);
}

namespace {

// cuDNN applies dropout between stacked layers, and recur only runs inference: a descriptor
// with p = 0 and no random-number state, one per device, made once (what PyTorch passes outside
// training). Null where it cannot be made: cuDNN takes a null one for a single layer.
cudnnDropoutDescriptor_t no_dropout(cudnnHandle_t handle) {
  static std::mutex mu;
  static cudnnDropoutDescriptor_t descs[kMaxDevices] = {};
  static bool tried[kMaxDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  if (device < 0 || device >= kMaxDevices) return nullptr;
  std::lock_guard lock(mu);
  if (!tried[device]) {
    tried[device] = true;
    cudnnDropoutDescriptor_t d = nullptr;
    if (cudnnCreateDropoutDescriptor(&d) != CUDNN_STATUS_SUCCESS) return nullptr;
    if (cudnnSetDropoutDescriptor(d, handle, 0.0f, nullptr, 0, 0) != CUDNN_STATUS_SUCCESS) {
      cudnnDestroyDropoutDescriptor(d);
      return nullptr;
    }
    descs[device] = d;  // kept for the process: every RNN descriptor of the device points to it
  }
  return descs[device];
}

}  // namespace

cudnnStatus_t set_rnn_desc(cudnnRNNDescriptor_t d, const RnnConfig& c, cudnnRNNAlgo_t algo,
                           cudnnHandle_t handle) {
  const CudnnRnnGeometry& g = c.geometry;
  const cudnnRNNMode_t mode = g.cell == RnnCell::kLstm  ? CUDNN_LSTM
                              : g.cell == RnnCell::kGru ? CUDNN_GRU
                              : c.relu                  ? CUDNN_RNN_RELU
                                                        : CUDNN_RNN_TANH;
  // float32: FMA math is exact fp32 (DEFAULT may pick TF32 tensor cores); TF32 on request.
  // float16: tensor cores, accumulating in float32.
  const cudnnMathType_t math = c.dtype == DType::kFloat16 ? CUDNN_TENSOR_OP_MATH
                               : c.tf32                   ? CUDNN_DEFAULT_MATH
                                                          : CUDNN_FMA_MATH;
  const int32_t H = static_cast<int32_t>(g.hidden_size);
  return cudnnSetRNNDescriptor_v8(d, algo, mode, g.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
                                  g.directions == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                  CUDNN_LINEAR_INPUT, c.data_type(), CUDNN_DATA_FLOAT, math,
                                  static_cast<int32_t>(g.input_size), H,
                                  /*projSize=*/H, static_cast<int32_t>(g.num_layers),
                                  no_dropout(handle), CUDNN_RNN_PADDED_IO_ENABLED);
}

Result<RnnDesc> make_rnn_desc(const RnnConfig& c, cudnnRNNAlgo_t algo, cudnnHandle_t handle) {
  cudnnRNNDescriptor_t d = nullptr;
  RECUR_CUDA_CHECK(cudnnCreateRNNDescriptor(&d));
  RnnDesc owned(d);
  RECUR_CUDA_CHECK(set_rnn_desc(d, c, algo, handle));
  return owned;
}

Status set_data_desc(cudnnRNNDataDescriptor_t d, const RnnConfig& c, int layout, int64_t T,
                     int64_t N, int64_t V, const int32_t* lengths) {
  // Zero bytes read as 0 in every data type: the padding cuDNN writes into y.
  static const double kZero = 0.0;
  static_assert(sizeof(int32_t) == sizeof(int));
  RECUR_CUDA_CHECK(cudnnSetRNNDataDescriptor(
      d, c.data_type(),
      layout == 0 ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED
                  : CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
      static_cast<int>(T), static_cast<int>(N), static_cast<int>(V),
      reinterpret_cast<const int*>(lengths), const_cast<double*>(&kZero)));
  return ok_status();
}

}  // namespace recur::cuda
