// ScatterElements (and the deprecated Scatter, opsets 9-10, which is the same operator): a
// copy of `data` with the elements that `indices` address along `axis` replaced by `updates`,
// or combined with them by `reduction` (add/mul from opset 16, max/min from 18).
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/scatter_reduce.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(int64_t axis, ScatterReduction reduction)
      : axis_(axis), reduction_(reduction) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* updates, required_input(ctx, 2));
    if (updates->dtype() != data->dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "updates are " + std::string(dtype_name(updates->dtype())) +
                           " but data is " + std::string(dtype_name(data->dtype())));
    }
    if (updates->shape() != indices->shape()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "updates " + shape_to_string(updates->shape()) + " and indices " +
                           shape_to_string(indices->shape()) + " differ in shape");
    }
    // Kept by each thread from run to run: a repeated shape allocates nothing.
    thread_local std::vector<int64_t> idx, offsets;
    Status st = read_int_values_into(*indices, "indices", idx);
    if (st.ok()) st = element_offsets(data->shape(), indices->shape(), idx, axis_, offsets);
    if (!st.ok()) return st.with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data->dtype(), data->shape()));
    copy_bytes(out->raw_data(), data->raw_data(), data->nbytes());
    if (!scatter_apply(reduction_, *updates, *out, offsets, 1)) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(data->dtype())) + " is not supported");
    }
    return ok_status();
  }

 private:
  int64_t axis_;
  ScatterReduction reduction_;
};

Result<std::unique_ptr<Kernel>> create_scatter_elements(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", 0);
  const std::string reduction = attrs.get_string("reduction", "none");
  RECUR_RETURN_IF_ERROR(attrs.status());
  auto r = parse_scatter_reduction(reduction, ctx.opset());
  if (!r.ok()) return r.status().with_context(ctx.node().describe());
  return std::make_unique<ScatterElementsKernel>(axis, *r);
}

}  // namespace

void register_scatter_elements(Registrar& r) {
  r.add({.op_type = "ScatterElements", .since = 11, .create = create_scatter_elements},
        infer_same_as_input0);
  r.add({.op_type = "Scatter", .since = 9, .create = create_scatter_elements},
        infer_same_as_input0);
}

}  // namespace recur::reference
