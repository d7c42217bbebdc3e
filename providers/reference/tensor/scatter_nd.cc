// ScatterND: a copy of `data` with the slices that the index tuples of `indices` name replaced
// by `updates`, or combined with them by `reduction` (add/mul from opset 16, max/min from 18).
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/scatter_reduce.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(ScatterReduction reduction) : reduction_(reduction) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* updates, required_input(ctx, 2));
    if (updates->dtype() != data->dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "updates are " + std::string(dtype_name(updates->dtype())) +
                           " but data is " + std::string(dtype_name(data->dtype())));
    }
    auto idx = read_int_values(*indices, "indices");
    if (!idx.ok()) return idx.status().with_context(ctx.node().describe());
    auto plan = nd_plan(data->shape(), indices->shape(), *idx, 0);
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    if (updates->shape() != plan->out_shape) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "updates have shape " + shape_to_string(updates->shape()) + " but indices " +
                           shape_to_string(indices->shape()) + " and data " +
                           shape_to_string(data->shape()) + " need " +
                           shape_to_string(plan->out_shape));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), data->shape()));
    copy_bytes(out->raw_data(), data->raw_data(), data->nbytes());
    if (!scatter_apply(reduction_, *updates, *out, plan->offsets, plan->slice)) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(data->dtype())) + " is not supported");
    }
    return ok_status();
  }

 private:
  ScatterReduction reduction_;
};

Result<std::unique_ptr<Kernel>> create_scatter_nd(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const std::string reduction = attrs.get_string("reduction", "none");
  RECUR_RETURN_IF_ERROR(attrs.status());
  auto r = parse_scatter_reduction(reduction, ctx.opset());
  if (!r.ok()) return r.status().with_context(ctx.node().describe());
  return std::make_unique<ScatterNDKernel>(*r);
}

}  // namespace

void register_scatter_nd(Registrar& r) {
  r.add({.op_type = "ScatterND", .since = 11, .create = create_scatter_nd}, infer_same_as_input0);
}

}  // namespace recur::reference
