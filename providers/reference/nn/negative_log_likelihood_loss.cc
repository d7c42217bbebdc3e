// NegativeLogLikelihoodLoss (opset 12): input [N, C, d...] of log-probabilities, target
// [N, d...] of class indices, optional weight [C]; reduction none, sum or mean.
#include "providers/reference/common/util.h"
#include "providers/reference/nn/loss.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class NllLossKernel final : public Kernel {
 public:
  explicit NllLossKernel(LossAttrs attrs) : attrs_(attrs) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* target, required_input(ctx, 1));
    auto xs = read_as_double(*x, "input");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    return weighted_nll(ctx, *xs, x->shape(), *target, ctx.input(2), attrs_, x->dtype(), 0);
  }

 private:
  LossAttrs attrs_;
};

}  // namespace

void register_negative_log_likelihood_loss(Registrar& r) {
  r.add({.op_type = "NegativeLogLikelihoodLoss",
         .since = 12,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(LossAttrs a, read_loss_attrs(c.node()));
           return std::make_unique<NllLossKernel>(a);
         }},
        infer_loss_output);
}

}  // namespace recur::reference
