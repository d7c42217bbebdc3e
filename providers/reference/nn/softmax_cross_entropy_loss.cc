// SoftmaxCrossEntropyLoss (opset 12): scores [N, C, d...], labels [N, d...], optional weights
// [C]. log_prob = log_softmax(scores) over C (optional output 1), then the weighted negative
// log-likelihood of the labels, reduced as NegativeLogLikelihoodLoss does.
#include <cmath>
#include <limits>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/loss.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class SoftmaxCrossEntropyKernel final : public Kernel {
 public:
  explicit SoftmaxCrossEntropyKernel(LossAttrs attrs) : attrs_(attrs) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* labels, required_input(ctx, 1));
    if (x->rank() < 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "scores must have shape [N, C, d...], got " + shape_to_string(x->shape()));
    }
    auto xs = read_as_double(*x, "scores");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    std::vector<double>& lp = *xs;
    const int64_t n = x->dim(0), classes = x->dim(1);
    const int64_t inner = n * classes == 0 ? 0 : x->numel() / (n * classes);
    // Stable log-softmax along C, in place.
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t d = 0; d < inner; ++d) {
        double* base = lp.data() + b * classes * inner + d;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < classes; ++c) m = std::max(m, base[c * inner]);
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c) sum += std::exp(base[c * inner] - m);
        const double log_sum = m + std::log(sum);
        for (int64_t c = 0; c < classes; ++c) base[c * inner] -= log_sum;
      }
    }
    RECUR_RETURN_IF_ERROR(
        weighted_nll(ctx, lp, x->shape(), *labels, ctx.input(2), attrs_, x->dtype(), 0));
    if (ctx.output_requested(1)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(1, x->dtype(), x->shape()));
      write_from_double(lp, *y);
    }
    return ok_status();
  }

 private:
  LossAttrs attrs_;
};

Status infer_softmax_cross_entropy(InferContext& ctx) {
  RECUR_RETURN_IF_ERROR(infer_loss_output(ctx));
  if (ctx.num_outputs() > 1) ctx.set_output(1, ctx.input_type(0));
  return ok_status();
}

}  // namespace

void register_softmax_cross_entropy_loss(Registrar& r) {
  r.add({.op_type = "SoftmaxCrossEntropyLoss",
         .since = 12,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(LossAttrs a, read_loss_attrs(c.node()));
           return std::make_unique<SoftmaxCrossEntropyKernel>(a);
         }},
        infer_softmax_cross_entropy);
}

}  // namespace recur::reference
