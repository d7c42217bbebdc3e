// GatherND: each tuple in the last dimension of `indices` names a slice of `data`; the first
// batch_dims dimensions (opset 12) are shared by data and indices.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : batch_dims_(batch_dims) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1));
    auto idx = read_int_values(*indices, "indices");
    if (!idx.ok()) return idx.status().with_context(ctx.node().describe());
    auto plan = nd_plan(data->shape(), indices->shape(), *idx, batch_dims_);
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, data->dtype(), plan->out_shape));
    const size_t esize = dtype_size(data->dtype());
    const size_t block = static_cast<size_t>(plan->slice) * esize;
    const auto* src = static_cast<const char*>(data->raw_data());
    auto* dst = static_cast<char*>(out->raw_data());
    if (block == 0) return ok_status();
    for (int64_t off : plan->offsets) {
      copy_bytes(dst, src + static_cast<size_t>(off) * esize, block);
      dst += block;
    }
    return ok_status();
  }

 private:
  int64_t batch_dims_;
};

Result<std::unique_ptr<Kernel>> create_gather_nd(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t batch_dims = attrs.get_int("batch_dims", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<GatherNDKernel>(batch_dims);
}

Status infer_gather_nd(InferContext& ctx) {
  const TypeInfo& data = ctx.input_type(0);
  const TypeInfo& indices = ctx.input_type(1);
  const int64_t b = AttrReader(ctx.node()).get_int("batch_dims", 0);
  if (!data.shape || !indices.shape || indices.shape->empty() ||
      !indices.shape->back().is_fixed()) {
    ctx.set_output(0, TypeInfo{data.dtype, std::nullopt});
    return ok_status();
  }
  const int64_t m = indices.shape->back().value;
  if (b < 0 || b + m > static_cast<int64_t>(data.shape->size()) ||
      b >= static_cast<int64_t>(indices.shape->size())) {
    return ctx.error("index tuples of length " + std::to_string(m) +
                     " are too long for data of rank " + std::to_string(data.shape->size()) +
                     " with batch_dims " + std::to_string(b));
  }
  std::vector<Dim> out(indices.shape->begin(), indices.shape->end() - 1);
  out.insert(out.end(), data.shape->begin() + b + m, data.shape->end());
  ctx.set_output(0, type_with_dims(data.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_gather_nd(Registrar& r) {
  r.add({.op_type = "GatherND", .since = 11, .create = create_gather_nd}, infer_gather_nd);
}

}  // namespace recur::reference
