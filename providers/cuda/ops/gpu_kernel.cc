#include "providers/cuda/ops/gpu_kernel.h"

#include <cmath>

namespace recur::cuda::ops {

Status GpuKernel::run(KernelContext& ctx) const {
  auto* state = dynamic_cast<CudaRunState*>(ctx.env().provider_state);
  if (!state)
    return ctx.error(ErrorCode::kInternal, "no CUDA run state (begin_run was not called)");
  RECUR_RETURN_IF_ERROR(state->status());
  DeviceGuard guard(ctx.device().index);
  RECUR_RETURN_IF_ERROR(guard.status());
  StreamContext& sc = state->context();
  RECUR_ASSIGN_OR_RETURN(int32_t * flag, sc.error_flag());
  GpuRun run{sc, sc.stream(), flag, ctx};
  return compute(ctx, run);
}

Result<const Tensor*> need_input(const KernelContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  if (!t)
    return ctx.error(ErrorCode::kInvalidArgument, "input " + std::to_string(i) + " is missing");
  return t;
}

Result<std::optional<std::vector<int64_t>>> host_ints(const KernelContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  if (!t) return std::optional<std::vector<int64_t>>();
  if (!t->is_cpu()) {
    return ctx.error(ErrorCode::kInternal,
                     "input " + std::to_string(i) + " is expected on the host");
  }
  std::vector<int64_t> v(static_cast<size_t>(t->numel()));
  if (t->dtype() == DType::kInt64) {
    for (int64_t k = 0; k < t->numel(); ++k) v[static_cast<size_t>(k)] = t->data<int64_t>()[k];
  } else if (t->dtype() == DType::kInt32) {
    for (int64_t k = 0; k < t->numel(); ++k) v[static_cast<size_t>(k)] = t->data<int32_t>()[k];
  } else {
    return ctx.error(ErrorCode::kInvalidArgument, "input " + std::to_string(i) +
                                                      " must be int32 or int64, got " +
                                                      std::string(dtype_name(t->dtype())));
  }
  return std::optional<std::vector<int64_t>>(std::move(v));
}

Result<double> host_scalar(const KernelContext& ctx, size_t i) {
  RECUR_ASSIGN_OR_RETURN(const Tensor* t, need_input(ctx, i));
  if (!t->is_cpu() || t->numel() != 1) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "input " + std::to_string(i) + " must be a scalar on the host");
  }
  switch (t->dtype()) {
    case DType::kFloat32:
      return static_cast<double>(t->data<float>()[0]);
    case DType::kFloat64:
      return t->data<double>()[0];
    case DType::kFloat16:
      return static_cast<double>(static_cast<float>(t->data<Float16>()[0]));
    case DType::kInt32:
      return static_cast<double>(t->data<int32_t>()[0]);
    case DType::kInt64:
      return static_cast<double>(t->data<int64_t>()[0]);
    default:
      return ctx.error(ErrorCode::kInvalidArgument, "input " + std::to_string(i) +
                                                        " has an unsupported dtype " +
                                                        std::string(dtype_name(t->dtype())));
  }
}

Result<Tensor*> new_output(KernelContext& ctx, size_t i, DType dtype, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "output shape " + shape_to_string(shape) + " is invalid or too large");
    }
    n *= d;
  }
  if (dtype_size(dtype) && n > static_cast<int64_t>((size_t{1} << 40) / dtype_size(dtype))) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "output shape " + shape_to_string(shape) + " is too large for the device");
  }
  return ctx.allocate_output(i, dtype, shape);
}

DType input_dtype(const Node& node, const Graph& graph, size_t i) {
  return node.has_input(i) ? graph.value(node.inputs[i]).type.dtype : DType::kUndefined;
}

bool is_float_type(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16;
}

ClaimFn claim_input_types(size_t i, std::vector<DType> types) {
  return [i, types](const Node& node, const Graph& graph) {
    const DType t = input_dtype(node, graph, i);
    for (DType ok : types)
      if (t == ok) return Claim::accept();
    std::string list;
    for (DType ok : types) list += (list.empty() ? "" : ", ") + std::string(dtype_name(ok));
    return Claim::decline(
        "input " + std::to_string(i) + " is " +
        (t == DType::kUndefined ? std::string("of unknown type") : std::string(dtype_name(t))) +
        ": the GPU kernel takes " + list);
  };
}

}  // namespace recur::cuda::ops
