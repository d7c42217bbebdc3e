// SVMRegressor (ai.onnx.ml 1): Y [N, 1] float. With n_supports > 0, y = rho[0] +
// sum_v coefficients[v] K(x, support_vectors[v]) (libsvm's epsilon- and nu-SVR, and the decision
// value of a one-class SVM); otherwise y = x . coefficients + rho[0] (liblinear; the kernel is
// ignored). one_class = 1 turns y into 1 where it is > 0, else -1.
//
// post_transform is read and checked but not applied: ONNX Runtime 1.30 was measured to ignore it
// here, so a model that sets it gives the same numbers in both runtimes. (The ONNX reference
// implementation refuses anything but NONE.)
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"
#include "providers/reference/ml/svm_common.h"

namespace recur::reference {

namespace {

class SvmRegressorKernel final : public Kernel {
 public:
  SvmRegressorKernel(ml::SvmKernel kernel, std::vector<float> coefficients,
                     std::vector<float> support_vectors, int64_t supports, int64_t features,
                     float rho, bool one_class)
      : kernel_(kernel),
        coefficients_(std::move(coefficients)),
        support_vectors_(std::move(support_vectors)),
        supports_(supports),
        features_(features),
        rho_(rho),
        one_class_(one_class) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ml::FeatureRows rows;
    RECUR_RETURN_IF_ERROR(ml::read_feature_rows(ctx, *x, &rows));
    if (rows.cols != features_) {
      return ctx.error(ErrorCode::kInvalidArgument, "X has " + std::to_string(rows.cols) +
                                                        " columns but the model has " +
                                                        std::to_string(features_) + " features");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, {rows.rows, 1}));
    float* out = y->data<float>();
    for (int64_t r = 0; r < rows.rows; ++r) {
      const float* in = rows.row(r);
      double sum = rho_;
      if (supports_ > 0) {
        for (int64_t v = 0; v < supports_; ++v) {
          sum += static_cast<double>(coefficients_[v]) *
                 kernel_(in, support_vectors_.data() + v * features_, features_);
        }
      } else {
        for (int64_t c = 0; c < features_; ++c) {
          sum += static_cast<double>(in[c]) * coefficients_[c];
        }
      }
      out[r] = one_class_ ? (sum > 0 ? 1.0f : -1.0f) : static_cast<float>(sum);
    }
    return ok_status();
  }

 private:
  ml::SvmKernel kernel_;
  std::vector<float> coefficients_, support_vectors_;
  int64_t supports_, features_;
  float rho_;
  bool one_class_;
};

Result<std::unique_ptr<Kernel>> create_svm_regressor(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::vector<float> coefficients = attrs.get_floats("coefficients");
  std::vector<float> support_vectors = attrs.get_floats("support_vectors");
  const std::vector<float> rho = attrs.get_floats("rho");
  const int64_t supports = attrs.get_int("n_supports", 0);
  const int64_t one_class = attrs.get_int("one_class", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  RECUR_RETURN_IF_ERROR(ml::read_post_transform(ctx.node()).status());
  RECUR_ASSIGN_OR_RETURN(ml::SvmKernel kernel, ml::read_svm_kernel(ctx.node()));
  if (rho.empty()) return ctx.error(ErrorCode::kInvalidModel, "rho is empty");
  if (coefficients.empty()) return ctx.error(ErrorCode::kInvalidModel, "coefficients is empty");
  const auto n_coef = static_cast<int64_t>(coefficients.size());
  const auto n_sv = static_cast<int64_t>(support_vectors.size());
  int64_t features = n_coef;
  if (supports < 0) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "n_supports is " + std::to_string(supports) + "; it cannot be negative");
  }
  if (supports > 0) {
    if (n_coef != supports || n_sv == 0 || n_sv % supports != 0) {
      return ctx.error(ErrorCode::kInvalidModel,
                       "n_supports is " + std::to_string(supports) + " but coefficients has " +
                           std::to_string(n_coef) + " values and support_vectors " +
                           std::to_string(n_sv) + "; it needs one coefficient per vector and " +
                           "a whole number of features per vector");
    }
    features = n_sv / supports;
  }
  return std::make_unique<SvmRegressorKernel>(kernel, std::move(coefficients),
                                              std::move(support_vectors), supports, features,
                                              rho[0], one_class != 0);
}

Status infer_svm_regressor(InferContext& ctx) { return ml::infer_scorer(ctx, nullptr, -1, 0, 1); }

}  // namespace

void register_svm_regressor(Registrar& r) {
  r.add(
      {.op_type = "SVMRegressor", .domain = kMlDomain, .since = 1, .create = create_svm_regressor},
      infer_svm_regressor);
}

}  // namespace recur::reference
