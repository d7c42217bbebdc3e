// What cuda-generic's glue kernels share: the run's stream and error flag, and small helpers for
// reading host inputs (shapes, axes) and checking dtypes.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <vector>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_context.h"
#include "providers/cuda/ops/launch.h"
#include "providers/cuda/ops/op_plans.h"
#include "runtime/provider/execution_provider.h"

namespace recur::cuda::ops {

// One node's view of the run's device state.
struct GpuRun {
  StreamContext& sc;
  cudaStream_t stream;
  // The error flag, and this node's site for it (lazily registered).
  int32_t* flag;
  const KernelContext& ctx;
  int32_t site(const std::string& what) const {
    return sc.error_site(ctx.node().describe() + ": " + what);
  }
};

class GpuKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) const final;

 protected:
  virtual Status compute(KernelContext& ctx, GpuRun& run) const = 0;
};

// RECUR_CUDA_CHECK for a launcher's cudaError_t, naming the node.
#define RECUR_LAUNCH_CHECK(ctx, call)                                                   \
  do {                                                                                  \
    const cudaError_t recur_err_ = (call);                                              \
    if (recur_err_ != cudaSuccess) {                                                    \
      return (ctx).error(ErrorCode::kDevice, std::string("kernel launch failed: ") +    \
                                                 cudaGetErrorName(recur_err_) + " (" +  \
                                                 cudaGetErrorString(recur_err_) + ")"); \
    }                                                                                   \
  } while (0)

// Input i, or an error naming it.
Result<const Tensor*> need_input(const KernelContext& ctx, size_t i);
// The int32/int64 values of a host input (a shape, axes, starts...); nullopt when absent.
Result<std::optional<std::vector<int64_t>>> host_ints(const KernelContext& ctx, size_t i);
// A scalar host input as double.
Result<double> host_scalar(const KernelContext& ctx, size_t i);

// Allocates output i; a shape whose size overflows or exceeds device memory is an error.
Result<Tensor*> new_output(KernelContext& ctx, size_t i, DType dtype, const Shape& shape);

// The dtype of input i as the graph declares it (kUndefined when unknown).
DType input_dtype(const Node& node, const Graph& graph, size_t i);

bool is_float_type(DType t);  // float16, float32, float64

// A claim that accepts nodes whose input `i` has one of `types`, naming the rest.
ClaimFn claim_input_types(size_t i, std::vector<DType> types);

// Registration per category (ops/*.cc).
void register_elementwise_kernels(KernelRegistry& r);
void register_movement_kernels(KernelRegistry& r);  // views too
void register_reduce_kernels(KernelRegistry& r);
void register_blas_kernels(KernelRegistry& r);
void register_cudnn_op_kernels(KernelRegistry& r);

}  // namespace recur::cuda::ops
