#include "providers/cuda/rnn/cudnn_weight_space.h"

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_context.h"
#include "providers/cuda/rnn/cudnn_weight_params.h"

namespace recur::cuda {

namespace {

Result<CudnnParamBlock> block_of(const void* base, const void* addr, cudnnTensorDescriptor_t desc,
                                 size_t elem_size) {
  CudnnParamBlock b;
  if (!addr) return b;
  cudnnDataType_t dt;
  int nb = 0;
  int dims[8] = {0}, strides[8] = {0};
  RECUR_CUDA_CHECK(cudnnGetTensorNdDescriptor(desc, 8, &dt, &nb, dims, strides));
  if (nb < 1) return internal_error("cudnnGetRNNWeightParams gave a descriptor of rank 0");
  int64_t numel = 1;
  for (int i = 0; i < nb; ++i) numel *= dims[i];
  const auto bytes = static_cast<const char*>(addr) - static_cast<const char*>(base);
  if (bytes < 0 || static_cast<size_t>(bytes) % elem_size != 0) {
    return internal_error("cudnnGetRNNWeightParams gave a misaligned address");
  }
  b.offset = static_cast<int64_t>(static_cast<size_t>(bytes) / elem_size);
  b.cols = dims[nb - 1];
  b.rows = b.cols ? numel / b.cols : 0;
  return b;
}

}  // namespace

Result<CudnnWeightMap> read_weight_map(cudnnHandle_t handle, cudnnRNNDescriptor_t desc,
                                       const RnnConfig& c, void* weight_space,
                                       size_t weight_bytes) {
  const CudnnRnnGeometry& g = c.geometry;
  CudnnWeightMap map(g, static_cast<int64_t>(weight_bytes / c.elem_size()));
  RECUR_ASSIGN_OR_RETURN(TensorDesc mdesc, new_tensor_desc());
  RECUR_ASSIGN_OR_RETURN(TensorDesc bdesc, new_tensor_desc());
  for (int p = 0; p < g.pseudo_layers(); ++p) {
    for (int id = 0; id < g.lin_layers(); ++id) {
      void* m = nullptr;
      void* b = nullptr;
      RECUR_CUDA_CHECK(cudnnGetRNNWeightParams(handle, desc, p, weight_bytes, weight_space, id,
                                               mdesc.get(), &m, bdesc.get(), &b));
      RECUR_ASSIGN_OR_RETURN(CudnnParamBlock mb,
                             block_of(weight_space, m, mdesc.get(), c.elem_size()));
      RECUR_ASSIGN_OR_RETURN(CudnnParamBlock bb,
                             block_of(weight_space, b, bdesc.get(), c.elem_size()));
      map.set(p, id, mb, bb);
    }
  }
  RECUR_RETURN_IF_ERROR(map.validate());
  return map;
}

Status fill_weight_space_from_host(const CudnnWeightPlan& plan, size_t elem_size,
                                   const HostLayerWeights& onnx, void* space, size_t bytes,
                                   int device) {
  std::vector<char> host(bytes);
  RECUR_RETURN_IF_ERROR(apply_onnx_to_cudnn_layers(plan, elem_size, onnx.w, onnx.r, onnx.b,
                                                   host.data(), host.size()));
  return copy_host_to_device(space, device, host.data(), host.size());
}

Status fill_weight_space_on_device(const CudnnWeightPlan& plan, size_t elem_size,
                                   const DeviceWeightSource& source, void* space, size_t bytes,
                                   cudaStream_t stream) {
  char* dst = static_cast<char*>(space);
  const size_t e = elem_size;
  RECUR_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream));
  for (const CudnnWeightCopy& cp : plan.copies) {
    const void* src = source(cp.layer, cp.tensor);
    if (!src) continue;
    RECUR_CUDA_CHECK(
        cudaMemcpyAsync(dst + static_cast<size_t>(cp.cudnn_offset) * e,
                        static_cast<const char*>(src) + static_cast<size_t>(cp.onnx_offset) * e,
                        static_cast<size_t>(cp.count) * e, cudaMemcpyDeviceToDevice, stream));
  }
  return ok_status();
}

Result<CudnnWeightMap> query_cudnn_weight_map(const CudnnRnnGeometry& geometry, DType dtype,
                                              int device) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16) {
    return invalid_argument("query_cudnn_weight_map: float32 or float16 only");
  }
  RnnConfig c;
  c.geometry = geometry;
  c.dtype = dtype;
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  RECUR_ASSIGN_OR_RETURN(cudnnHandle_t handle, scoped.context().cudnn());
  RECUR_ASSIGN_OR_RETURN(RnnDesc desc, make_rnn_desc(c, CUDNN_RNN_ALGO_STANDARD, handle));
  size_t bytes = 0;
  RECUR_CUDA_CHECK(cudnnGetRNNWeightSpaceSize(handle, desc.get(), &bytes));
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> space, allocate_device(bytes, device));
  RECUR_ASSIGN_OR_RETURN(CudnnWeightMap map,
                         read_weight_map(handle, desc.get(), c, space.get(), bytes));
  RECUR_RETURN_IF_ERROR(scoped.synchronize());
  return map;
}

}  // namespace recur::cuda
