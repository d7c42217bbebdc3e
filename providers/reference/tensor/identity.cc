#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"

namespace recur::reference {

namespace {

// Outputs share the input's memory: kernels never write into their inputs.
class IdentityKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    return ctx.set_output(0, *x);
  }
};

}  // namespace

void register_identity(Registrar& r) {
  r.add({.op_type = "Identity",
         .since = 1,
         .create = make_simple<IdentityKernel>(),
         .takes_strings = true,
         .takes_sequences = true,
         .takes_optionals = true},
        infer_same_as_input0);
}

}  // namespace recur::reference
