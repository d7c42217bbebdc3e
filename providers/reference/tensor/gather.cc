// Gather: takes the slices of `data` along `axis` named by `indices` (negative indices count
// from the end).
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1));
    auto axis = normalize_axis(axis_, data->rank(), "axis");
    if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
    const auto ax = static_cast<size_t>(*axis);
    // The indices are read in place (an embedding lookup has one per token): no copy.
    if (!indices->is_cpu() ||
        (indices->dtype() != DType::kInt64 && indices->dtype() != DType::kInt32)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "indices must be int64 or int32 on the host, not " +
                           std::string(dtype_name(indices->dtype())));
    }
    const bool i64 = indices->dtype() == DType::kInt64;
    const void* iraw = indices->raw_data();
    auto index_at = [&](int64_t j) -> int64_t {
      return i64 ? static_cast<const int64_t*>(iraw)[j] : static_cast<const int32_t*>(iraw)[j];
    };
    const int64_t dim = data->shape()[ax];
    const int64_t n = indices->numel();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = index_at(j);
      if (i < -dim || i >= dim) {
        return ctx.error(ErrorCode::kOutOfRange,
                         "index " + std::to_string(i) + " is out of range for axis " +
                             std::to_string(*axis) + " of size " + std::to_string(dim) +
                             " (data shape " + shape_to_string(data->shape()) + ")");
      }
    }
    Shape out_shape(data->shape().begin(), data->shape().begin() + *axis);
    out_shape.insert(out_shape.end(), indices->shape().begin(), indices->shape().end());
    out_shape.insert(out_shape.end(), data->shape().begin() + *axis + 1, data->shape().end());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, data->dtype(), out_shape));
    if (out->numel() == 0) return ok_status();
    const int64_t outer = dims_product(data->shape(), 0, ax);
    const int64_t inner = dims_product(data->shape(), ax + 1, data->shape().size());
    const size_t block = static_cast<size_t>(inner) * dtype_size(data->dtype());
    if (block == 0) return ok_status();
    const auto* src = static_cast<const char*>(data->raw_data());
    auto* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      const char* slab = src + static_cast<size_t>(o * dim) * block;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = index_at(j);
        copy_bytes(dst, slab + static_cast<size_t>(i < 0 ? i + dim : i) * block, block);
        dst += block;
      }
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

Result<std::unique_ptr<Kernel>> create_gather(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<GatherKernel>(axis);
}

Status infer_gather(InferContext& ctx) {
  const TypeInfo& data = ctx.input_type(0);
  const TypeInfo& indices = ctx.input_type(1);
  if (!data.shape || !indices.shape) {
    ctx.set_output(0, TypeInfo{data.dtype, std::nullopt});
    return ok_status();
  }
  auto axis = normalize_axis(AttrReader(ctx.node()).get_int("axis", 0),
                             static_cast<int64_t>(data.shape->size()), "axis");
  if (!axis.ok()) return ctx.error(axis.status().message());
  std::vector<Dim> out(data.shape->begin(), data.shape->begin() + *axis);
  out.insert(out.end(), indices.shape->begin(), indices.shape->end());
  out.insert(out.end(), data.shape->begin() + *axis + 1, data.shape->end());
  ctx.set_output(0, type_with_dims(data.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_gather(Registrar& r) {
  r.add({.op_type = "Gather", .since = 1, .create = create_gather}, infer_gather);
}

}  // namespace recur::reference
