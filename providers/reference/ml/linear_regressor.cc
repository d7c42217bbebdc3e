// LinearRegressor (ai.onnx.ml 1): Y[n, t] = sum_c X[n, c] * coefficients[t * C + c] +
// intercepts[t], then post_transform on each row, in float. Y is [N, targets].
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class LinearRegressorKernel final : public Kernel {
 public:
  LinearRegressorKernel(std::vector<float> coefficients, std::vector<float> intercepts,
                        int64_t targets, ml::PostTransform post)
      : coefficients_(std::move(coefficients)),
        intercepts_(std::move(intercepts)),
        targets_(targets),
        post_(post) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ml::FeatureRows rows;
    RECUR_RETURN_IF_ERROR(ml::read_feature_rows(ctx, *x, &rows));
    if (static_cast<int64_t>(coefficients_.size()) != targets_ * rows.cols) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X has " + std::to_string(rows.cols) + " columns but coefficients has " +
                           std::to_string(coefficients_.size()) + " values for " +
                           std::to_string(targets_) + " target(s)");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output(0, DType::kFloat32, {rows.rows, targets_}));
    float* out = y->data<float>();
    for (int64_t r = 0; r < rows.rows; ++r) {
      const float* in = rows.row(r);
      float* o = out + r * targets_;
      for (int64_t t = 0; t < targets_; ++t) {
        const float* w = coefficients_.data() + t * rows.cols;
        double acc = intercepts_.empty() ? 0.0 : intercepts_[static_cast<size_t>(t)];
        for (int64_t c = 0; c < rows.cols; ++c) acc += static_cast<double>(in[c]) * w[c];
        o[t] = static_cast<float>(acc);
      }
      ml::post_transform_row(post_, o, targets_);
    }
    return ok_status();
  }

 private:
  std::vector<float> coefficients_, intercepts_;
  int64_t targets_;
  ml::PostTransform post_;
};

Result<std::unique_ptr<Kernel>> create_linear_regressor(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::vector<float> coefficients = attrs.get_floats("coefficients");
  std::vector<float> intercepts = attrs.get_floats("intercepts");
  const int64_t targets = attrs.get_int("targets", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  RECUR_ASSIGN_OR_RETURN(ml::PostTransform post, ml::read_post_transform(ctx.node()));
  if (targets < 1) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "targets is " + std::to_string(targets) + "; it must be at least 1");
  }
  if (!intercepts.empty() && static_cast<int64_t>(intercepts.size()) != targets) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "intercepts has " + std::to_string(intercepts.size()) + " values for " +
                         std::to_string(targets) + " target(s)");
  }
  if (coefficients.empty() || static_cast<int64_t>(coefficients.size()) % targets != 0) {
    return ctx.error(ErrorCode::kInvalidModel, "coefficients has " +
                                                   std::to_string(coefficients.size()) +
                                                   " values, not a positive multiple of targets (" +
                                                   std::to_string(targets) + ")");
  }
  return std::make_unique<LinearRegressorKernel>(std::move(coefficients), std::move(intercepts),
                                                 targets, post);
}

Status infer_linear_regressor(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t targets = attrs.get_int("targets", 1);
  return ml::infer_scorer(ctx, nullptr, -1, 0, targets);
}

}  // namespace

void register_linear_regressor(Registrar& r) {
  r.add({.op_type = "LinearRegressor",
         .domain = kMlDomain,
         .since = 1,
         .create = create_linear_regressor},
        infer_linear_regressor);
}

}  // namespace recur::reference
