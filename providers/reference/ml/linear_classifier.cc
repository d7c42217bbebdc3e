// LinearClassifier (ai.onnx.ml 1): E linear scores per row, s[e] = X . coefficients[e] +
// intercepts[e] (E = the number of intercepts, or coefficients / C without them), then the label
// of the largest raw score and the scores after post_transform, in float. Outputs: Y, the labels
// [N] (int64 or string, from classlabels_*; the class index without labels) and Z, [N, E].
//
// One score with two labels is the binary form, as scikit-learn's converters write it for a
// two-class model. As in ONNX Runtime (measured against 1.30), Z is then [1 - s, s], or
// [1 - p, p] with p = logistic(s) for LOGISTIC (SOFTMAX and SOFTMAX_ZERO leave it as [1 - s, s]),
// and the label is the second class where s > 0. The ONNX reference implementation writes
// [-s, s] instead; recur follows ONNX Runtime, whose outputs deployed models were checked
// against. PROBIT here gives [probit(1 - s), probit(s)]; ONNX Runtime's output for that
// combination mixes values of different rows and is not followed. One score without labels gives
// Z = [N, 1] and labels 1 where s > 0, else 0.
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class LinearClassifierKernel final : public Kernel {
 public:
  LinearClassifierKernel(std::vector<float> coefficients, std::vector<float> intercepts,
                         ml::ClassLabels labels, ml::PostTransform post)
      : coefficients_(std::move(coefficients)),
        intercepts_(std::move(intercepts)),
        labels_(std::move(labels)),
        post_(post) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ml::FeatureRows rows;
    RECUR_RETURN_IF_ERROR(ml::read_feature_rows(ctx, *x, &rows));
    const auto n_coef = static_cast<int64_t>(coefficients_.size());
    const int64_t classes = intercepts_.empty() ? (rows.cols > 0 ? n_coef / rows.cols : 0)
                                                : static_cast<int64_t>(intercepts_.size());
    if (classes < 1 || classes * rows.cols != n_coef) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X has " + std::to_string(rows.cols) + " columns but coefficients has " +
                           std::to_string(n_coef) + " values for " +
                           (intercepts_.empty() ? std::string("its classes")
                                                : std::to_string(classes) + " class(es)"));
    }
    RECUR_RETURN_IF_ERROR(check_labels(ctx, classes));
    const bool binary = classes == 1 && labels_.size() == 2;
    const int64_t width = binary ? 2 : classes;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ml::allocate_labels(ctx, labels_, rows.rows));
    RECUR_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DType::kFloat32, {rows.rows, width}));
    float* out = z->data<float>();
    for (int64_t r = 0; r < rows.rows; ++r) {
      const float* in = rows.row(r);
      float* o = out + r * width;
      for (int64_t e = 0; e < classes; ++e) {
        const float* w = coefficients_.data() + e * rows.cols;
        double acc = intercepts_.empty() ? 0.0 : intercepts_[static_cast<size_t>(e)];
        for (int64_t c = 0; c < rows.cols; ++c) acc += static_cast<double>(in[c]) * w[c];
        o[e] = static_cast<float>(acc);
      }
      if (classes == 1) {
        const float s = o[0];
        const int64_t label = s > 0 ? 1 : 0;
        if (binary) {
          write_binary(s, o);
          ml::set_label(*y, r, labels_, label);
        } else {
          ml::post_transform_row(post_, o, 1);
          y->data<int64_t>()[r] = label;
        }
        continue;
      }
      int64_t best = 0;
      for (int64_t e = 1; e < classes; ++e) {
        if (o[e] > o[best]) best = e;
      }
      if (labels_.size() == 0) {
        y->data<int64_t>()[r] = best;
      } else {
        ml::set_label(*y, r, labels_, best);
      }
      ml::post_transform_row(post_, o, classes);
    }
    return ok_status();
  }

 private:
  Status check_labels(const KernelContext& ctx, int64_t classes) const {
    const int64_t n = labels_.size();
    if (classes == 1 ? (n == 0 || n == 2) : (n == 0 || n == classes)) return ok_status();
    return ctx.error(
        ErrorCode::kInvalidArgument,
        "the model has " + std::to_string(classes) + " score(s) per row but " + std::to_string(n) +
            " class label(s); it needs " +
            (classes == 1 ? std::string("2 (or none)") : std::to_string(classes) + " (or none)"));
  }

  void write_binary(float s, float* o) const {
    if (post_ == ml::PostTransform::kLogistic) {
      o[1] = s;
      ml::post_transform_row(post_, o + 1, 1);
      o[0] = 1.0f - o[1];
    } else if (post_ == ml::PostTransform::kProbit) {
      o[0] = ml::probit(1.0f - s);
      o[1] = ml::probit(s);
    } else {
      o[0] = 1.0f - s;
      o[1] = s;
    }
  }

  std::vector<float> coefficients_, intercepts_;
  ml::ClassLabels labels_;
  ml::PostTransform post_;
};

Result<std::unique_ptr<Kernel>> create_linear_classifier(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::vector<float> coefficients = attrs.get_floats("coefficients");
  std::vector<float> intercepts = attrs.get_floats("intercepts");
  RECUR_RETURN_IF_ERROR(attrs.status());
  RECUR_ASSIGN_OR_RETURN(ml::PostTransform post, ml::read_post_transform(ctx.node()));
  RECUR_ASSIGN_OR_RETURN(
      ml::ClassLabels labels,
      ml::read_class_labels(ctx.node(), "classlabels_ints", "classlabels_strings"));
  if (coefficients.empty()) return ctx.error(ErrorCode::kInvalidModel, "coefficients is empty");
  if (!intercepts.empty() && coefficients.size() % intercepts.size() != 0) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "coefficients has " + std::to_string(coefficients.size()) +
                         " values, not a multiple of the " + std::to_string(intercepts.size()) +
                         " intercepts");
  }
  return std::make_unique<LinearClassifierKernel>(std::move(coefficients), std::move(intercepts),
                                                  std::move(labels), post);
}

Status infer_linear_classifier(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  const auto intercepts = attrs.get_floats("intercepts");
  RECUR_ASSIGN_OR_RETURN(
      ml::ClassLabels labels,
      ml::read_class_labels(ctx.node(), "classlabels_ints", "classlabels_strings"));
  int64_t width = -1;
  if (!intercepts.empty()) {
    width =
        intercepts.size() == 1 && labels.size() == 2 ? 2 : static_cast<int64_t>(intercepts.size());
  }
  // Labels are strings only when given as strings; the index otherwise.
  return ml::infer_scorer(ctx, &labels, 0, 1, width);
}

}  // namespace

void register_linear_classifier(Registrar& r) {
  r.add({.op_type = "LinearClassifier",
         .domain = kMlDomain,
         .since = 1,
         .create = create_linear_classifier,
         .takes_strings = true},
        infer_linear_classifier);
}

}  // namespace recur::reference
