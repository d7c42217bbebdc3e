#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

// The value of a present optional; an empty one is an error.
class OptionalGetElementKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->is_none()) {
      return ctx.error(ErrorCode::kInvalidArgument, "the optional input is empty");
    }
    return ctx.set_output(0, *x);
  }
};

Status infer_get_element(InferContext& ctx) {
  TypeInfo t = ctx.input_type(0);
  t.optional = false;
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_optional_get_element(Registrar& r) {
  r.add({.op_type = "OptionalGetElement",
         .since = 15,
         .create = make_simple<OptionalGetElementKernel>(),
         .takes_strings = true,
         .takes_sequences = true,
         .takes_optionals = true},
        infer_get_element);
}

}  // namespace recur::reference
