#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

// True for a present optional; false for an empty one or (opset 18) an absent input.
class OptionalHasElementKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    return ctx.set_output(0, Tensor::scalar<bool>(x != nullptr && !x->is_none()));
  }
};

Status infer_has_element(InferContext& ctx) {
  ctx.set_output(0, TypeInfo::of(DType::kBool, {}));
  return ok_status();
}

}  // namespace

void register_optional_has_element(Registrar& r) {
  r.add({.op_type = "OptionalHasElement",
         .since = 15,
         .create = make_simple<OptionalHasElementKernel>(),
         .takes_strings = true,
         .takes_sequences = true,
         .takes_optionals = true},
        infer_has_element);
}

}  // namespace recur::reference
