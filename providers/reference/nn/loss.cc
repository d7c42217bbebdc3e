#include "providers/reference/nn/loss.h"

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

Result<LossAttrs> read_loss_attrs(const Node& node) {
  AttrReader attrs(node);
  LossAttrs a;
  const std::string reduction = attrs.get_string("reduction", "mean");
  if (attrs.has("ignore_index")) a.ignore_index = attrs.get_int("ignore_index", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (reduction == "none") {
    a.reduction = LossAttrs::Reduction::kNone;
  } else if (reduction == "sum") {
    a.reduction = LossAttrs::Reduction::kSum;
  } else if (reduction == "mean") {
    a.reduction = LossAttrs::Reduction::kMean;
  } else {
    return invalid_model(node.describe() + ": reduction '" + reduction +
                         "' is not one of none, sum, mean");
  }
  return a;
}

Status weighted_nll(KernelContext& ctx, const std::vector<double>& log_prob, const Shape& shape,
                    const Tensor& target, const Tensor* weight, const LossAttrs& attrs, DType dtype,
                    size_t out) {
  if (shape.size() < 2) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "the input must have shape [N, C, d...], got " + shape_to_string(shape));
  }
  Shape want_target = {shape[0]};
  want_target.insert(want_target.end(), shape.begin() + 2, shape.end());
  if (target.shape() != want_target) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "the target has shape " + shape_to_string(target.shape()) + " but must be " +
                         shape_to_string(want_target) + " for an input of shape " +
                         shape_to_string(shape));
  }
  auto targets = read_int_values(target, "target");
  if (!targets.ok()) return targets.status().with_context(ctx.node().describe());
  const int64_t classes = shape[1];
  std::vector<double> w;
  if (weight) {
    if (weight->shape() != Shape{classes}) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "the weight has shape " + shape_to_string(weight->shape()) +
                           " but must be [" + std::to_string(classes) + "]");
    }
    RECUR_ASSIGN_OR_RETURN(w, read_as_double(*weight, "weight"));
  }
  const int64_t n = shape[0];
  const int64_t inner = n == 0 ? 0 : target.numel() / n;  // the product of d...
  std::vector<double> loss(static_cast<size_t>(target.numel()));
  double total = 0, weight_sum = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t d = 0; d < inner; ++d) {
      const size_t i = static_cast<size_t>(b * inner + d);
      const int64_t t = (*targets)[i];
      if (attrs.ignore_index && t == *attrs.ignore_index) continue;  // loss 0, weight 0
      if (t < 0 || t >= classes) {
        return ctx.error(ErrorCode::kOutOfRange, "target " + std::to_string(t) +
                                                     " is out of range for " +
                                                     std::to_string(classes) + " classes");
      }
      const double wt = weight ? w[static_cast<size_t>(t)] : 1.0;
      loss[i] = -log_prob[static_cast<size_t>((b * classes + t) * inner + d)] * wt;
      total += loss[i];
      weight_sum += wt;
    }
  }
  if (attrs.reduction == LossAttrs::Reduction::kNone) {
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out, dtype, target.shape()));
    write_from_double(loss, *y);
    return ok_status();
  }
  // With every target ignored, the mean is 0 / 0: NaN, as numpy computes it.
  const double v = attrs.reduction == LossAttrs::Reduction::kSum ? total : total / weight_sum;
  RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out, dtype, {}));
  write_from_double({v}, *y);
  return ok_status();
}

Status infer_loss_output(InferContext& ctx) {
  auto attrs = read_loss_attrs(ctx.node());
  if (!attrs.ok()) return attrs.status();
  TypeInfo t;
  t.dtype = ctx.input_type(0).dtype;
  if (attrs->reduction == LossAttrs::Reduction::kNone) {
    t.shape = ctx.input_type(1).shape;
  } else {
    t.shape = std::vector<Dim>{};
  }
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace recur::reference
