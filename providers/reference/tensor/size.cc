// Size: the input's element count as an int64 scalar.
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"

namespace recur::reference {

namespace {

class SizeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DType::kInt64, {}));
    out->data<int64_t>()[0] = x->numel();
    return ok_status();
  }
};

Status infer_size(InferContext& ctx) {
  ctx.set_output(0, TypeInfo::of(DType::kInt64, {}));
  return ok_status();
}

}  // namespace

void register_size(Registrar& r) {
  r.add({.op_type = "Size",
         .since = 1,
         .create = make_simple<SizeKernel>(),
         .shape_only_inputs = {0}},
        infer_size);
}

}  // namespace recur::reference
