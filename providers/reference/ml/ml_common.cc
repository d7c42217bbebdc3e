#include "providers/reference/ml/ml_common.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "providers/reference/common/dispatch.h"

namespace recur::reference::ml {

Result<PostTransform> read_post_transform(const Node& node) {
  AttrReader attrs(node);
  const std::string name = attrs.get_string("post_transform", "NONE");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (name == "NONE") return PostTransform::kNone;
  if (name == "SOFTMAX") return PostTransform::kSoftmax;
  if (name == "LOGISTIC") return PostTransform::kLogistic;
  if (name == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (name == "PROBIT") return PostTransform::kProbit;
  return invalid_model(node.describe() + ": post_transform '" + name +
                       "' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT");
}

namespace {

float logistic(float v) {
  // exp of a negative argument only, so a large |v| gives 0 or 1 and never inf/inf.
  const float e = std::exp(-std::abs(v));
  const float p = 1.0f / (1.0f + e);
  return v < 0 ? 1.0f - p : p;
}

float erf_inv(float x) {
  const float sign = x < 0 ? -1.0f : 1.0f;
  const float t = (1.0f - x) * (1.0f + x);
  if (t == 0) return 0;
  const float ln = std::log(t);
  constexpr float kA = 0.147f;
  constexpr float kPi = 3.14159265358979f;
  const float v = 2.0f / (kPi * kA) + 0.5f * ln;
  const float v2 = ln / kA;
  return sign * std::sqrt(-v + std::sqrt(v * v - v2));
}

}  // namespace

float probit(float p) { return 1.41421356f * erf_inv(2.0f * p - 1.0f); }

void post_transform_row(PostTransform t, float* s, int64_t n) {
  switch (t) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) s[i] = logistic(s[i]);
      return;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) s[i] = probit(s[i]);
      return;
    case PostTransform::kSoftmax: {
      if (n == 0) return;
      const float top = *std::max_element(s, s + n);
      float sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += s[i] = std::exp(s[i] - top);
      for (int64_t i = 0; i < n; ++i) s[i] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      // Softmax over the nonzero scores; a score of (nearly) zero stays zero.
      if (n == 0) return;
      const float top = *std::max_element(s, s + n);
      const float scale = std::exp(-top);
      float sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        s[i] = (s[i] > 1e-7f || s[i] < -1e-7f) ? std::exp(s[i] - top) : s[i] * scale;
        sum += s[i];
      }
      for (int64_t i = 0; i < n; ++i) s[i] = sum == 0 ? 0.5f : s[i] / sum;
      return;
    }
  }
}

Status read_feature_rows(const KernelContext& ctx, const Tensor& x, FeatureRows* out) {
  if (x.rank() != 1 && x.rank() != 2) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "X must be [N, C] or [C], got " + shape_to_string(x.shape()));
  }
  out->cols = x.rank() == 1 ? x.dim(0) : x.dim(1);
  out->rows = x.rank() == 1 ? 1 : x.dim(0);
  if (x.dtype() == DType::kFloat32) {
    out->data = x.data<float>();
    return ok_status();
  }
  out->converted.resize(static_cast<size_t>(x.numel()));
  const bool ok = visit_dtype(TypeList<double, int32_t, int64_t>{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i)
      out->converted[static_cast<size_t>(i)] = static_cast<float>(in[i]);
  });
  if (!ok) {
    return ctx.error(ErrorCode::kInvalidArgument, "X must be float, double, int32 or int64, not " +
                                                      std::string(dtype_name(x.dtype())));
  }
  out->data = out->converted.data();
  return ok_status();
}

Result<ClassLabels> read_class_labels(const Node& node, const char* ints_name,
                                      const char* strings_name) {
  AttrReader attrs(node);
  ClassLabels labels;
  const bool has_strings = attrs.has(strings_name);
  labels.ints = attrs.get_ints(ints_name);
  labels.strings = attrs.get_strings(strings_name);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (has_strings && attrs.has(ints_name)) {
    return invalid_model(node.describe() + ": " + ints_name + " and " + strings_name +
                         " are both set; a classifier has one kind of label");
  }
  labels.use_strings = has_strings && !labels.strings.empty();
  return labels;
}

Result<Tensor*> allocate_labels(KernelContext& ctx, const ClassLabels& labels, int64_t rows) {
  return ctx.allocate_output(0, labels.use_strings ? DType::kString : DType::kInt64, {rows});
}

void set_label(Tensor& y, int64_t row, const ClassLabels& labels, int64_t index) {
  if (labels.use_strings) {
    y.data<std::string>()[row] = labels.strings[static_cast<size_t>(index)];
  } else {
    y.data<int64_t>()[row] = labels.ints[static_cast<size_t>(index)];
  }
}

Status infer_scorer(InferContext& ctx, const ClassLabels* labels, int labels_output,
                    int scores_output, int64_t n_scores) {
  const TypeInfo& x = ctx.input_type(0);
  Dim rows{};
  if (x.shape && x.shape->size() == 1) rows = Dim{1, ""};
  if (x.shape && x.shape->size() == 2) rows = (*x.shape)[0];
  if (x.shape && x.shape->size() != 1 && x.shape->size() != 2) {
    return ctx.error("X must be [N, C] or [C], not " + x.to_string());
  }
  if (labels_output >= 0 && static_cast<size_t>(labels_output) < ctx.num_outputs()) {
    ctx.set_output(
        static_cast<size_t>(labels_output),
        TypeInfo{labels->use_strings ? DType::kString : DType::kInt64, std::vector<Dim>{rows}});
  }
  if (static_cast<size_t>(scores_output) < ctx.num_outputs()) {
    ctx.set_output(static_cast<size_t>(scores_output),
                   TypeInfo{DType::kFloat32,
                            std::vector<Dim>{rows, n_scores >= 0 ? Dim{n_scores, ""} : Dim{}}});
  }
  return ok_status();
}

}  // namespace recur::reference::ml
