#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"

namespace recur::reference {

namespace {

// The optimiser folds most Constant nodes into initializers; this runs the rest (and every
// one when optimisation is off).
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(Tensor value) : value_(std::move(value)) {}
  Status run(KernelContext& ctx) const override { return ctx.set_output(0, value_); }

 private:
  Tensor value_;
};

Status infer_constant(InferContext& ctx) {
  auto v = constant_node_value(ctx.node());
  if (!v.ok()) return v.status();
  ctx.set_output(0, TypeInfo::of(v->dtype(), v->shape()));
  return ok_status();
}

}  // namespace

void register_constant(Registrar& r) {
  r.add({.op_type = "Constant",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(Tensor v, constant_node_value(ctx.node()));
           return std::make_unique<ConstantKernel>(std::move(v));
         }},
        infer_constant);
}

}  // namespace recur::reference
