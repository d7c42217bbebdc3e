// TreeEnsembleClassifier (ai.onnx.ml 1, 3): per row of X [N, F] (or [F]), the leaf each tree
// reaches adds its (class, weight) contributions to the class scores, which start at
// base_values. Outputs: Y, the labels [N] (classlabels_int64s or classlabels_strings) and Z, the
// float scores [N, classes] after post_transform.
//
// Where ONNX Runtime's results differ from the ONNX reference implementation, recur gives ONNX
// Runtime's (measured against 1.30), since deployed models were checked against it:
// - The label is that of the largest score among the classes some reached leaf (or a base
//   value) scored, so a class no leaf names does not win with its 0 over negative scores.
// - Two classes are scored as a binary classifier. The positive score p is class 1's where a
//   reached leaf scored class 1, else class 0's (plus a single base value). If every
//   contribution names one class (the form gradient-boosting converters write), the label is
//   class 1 where p > 0.5, or p > 0 when some weight is negative; otherwise where p > 0. Where
//   class 1 was not scored, Z is [1 - p, p] (one class, no negative weight) or [-p, p];
//   LOGISTIC gives [1 - logistic(p), logistic(p)] and PROBIT [probit(p), 0], and SOFTMAX and
//   SOFTMAX_ZERO leave the pair as it is. Where class 1 was scored, Z is the two scores after
//   post_transform. Two base values are added to their classes (ONNX Runtime's handling of
//   that rare form is not followed).
// Comparisons are made in double on X's own values.
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/legacy_tree_ensemble.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

struct ClassifierSpec {
  ml::LegacyTrees trees;
  ml::ClassLabels labels;
  std::vector<double> base;
  ml::PostTransform post = ml::PostTransform::kNone;
  bool one_class_named = false;  // every contribution names the same class
};

class TreeEnsembleClassifierKernel final : public Kernel {
 public:
  explicit TreeEnsembleClassifierKernel(ClassifierSpec s) : s_(std::move(s)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    int64_t rows = 0, cols = 0;
    RECUR_RETURN_IF_ERROR(s_.trees.check_input(ctx, *x, &rows, &cols));
    const int64_t width = s_.labels.size();
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ml::allocate_labels(ctx, s_.labels, rows));
    RECUR_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DType::kFloat32, {rows, width}));
    return ml::LegacyTrees::visit_x(
        ctx, *x, [&](const auto* in) { return score(ctx, in, rows, cols, *y, z->data<float>()); });
  }

 private:
  template <class T>
  Status score(const KernelContext& ctx, const T* in, int64_t rows, int64_t cols, Tensor& y,
               float* out) const {
    const auto& t = s_.trees;
    const auto n = static_cast<size_t>(s_.labels.size());
    std::vector<double> acc(n);
    std::vector<char> seen(n);
    const int64_t width = s_.labels.size();
    const bool two = n == 2;
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t j = 0; j < n; ++j) {
        // With two classes a single base value belongs to class 0 alone.
        const bool has_base =
            two ? s_.base.size() == 2 || (j == 0 && s_.base.size() == 1) : !s_.base.empty();
        acc[j] = has_base ? s_.base[std::min(j, s_.base.size() - 1)] : 0.0;
        seen[j] = has_base && (!two || s_.base.size() == 2);
      }
      for (int64_t root : t.roots) {
        const int64_t leaf = t.leaf_of(root, in + r * cols);
        if (leaf < 0) return ctx.error(ErrorCode::kInvalidArgument, "a tree has a cycle");
        const auto& node = t.nodes[static_cast<size_t>(leaf)];
        for (int64_t k = node.first; k < node.first + node.count; ++k) {
          const auto c = static_cast<size_t>(t.output[static_cast<size_t>(k)]);
          acc[c] += t.weight[static_cast<size_t>(k)];
          seen[c] = 1;
        }
      }
      float* o = out + r * width;
      if (two) {
        ml::set_label(y, r, s_.labels, write_two(acc, seen, o));
        continue;
      }
      int64_t best = -1;
      for (size_t j = 0; j < n; ++j) {
        o[j] = static_cast<float>(acc[j]);
        if (seen[j] && (best < 0 || acc[j] > acc[static_cast<size_t>(best)])) {
          best = static_cast<int64_t>(j);
        }
      }
      ml::set_label(y, r, s_.labels, best < 0 ? 0 : best);
      ml::post_transform_row(s_.post, o, width);
    }
    return ok_status();
  }

  // Writes the scores of a two-class model and returns the label's index.
  int64_t write_two(const std::vector<double>& acc, const std::vector<char>& seen, float* o) const {
    const bool positive = s_.trees.weights_all_positive;
    const double p = seen[1] ? acc[1] : acc[0];
    const double threshold = s_.one_class_named && positive ? 0.5 : 0.0;
    const int64_t label = p > threshold ? 1 : 0;
    if (seen[1]) {
      o[0] = static_cast<float>(acc[0]);
      o[1] = static_cast<float>(acc[1]);
      ml::post_transform_row(s_.post, o, 2);
      return label;
    }
    const auto s = static_cast<float>(p);
    switch (s_.post) {
      case ml::PostTransform::kLogistic:
        o[1] = s;
        ml::post_transform_row(s_.post, o + 1, 1);
        o[0] = 1.0f - o[1];
        break;
      case ml::PostTransform::kProbit:
        o[0] = ml::probit(s);
        o[1] = 0;
        break;
      default:
        o[0] = s_.one_class_named && positive ? 1.0f - s : -s;
        o[1] = s;
    }
    return label;
  }

  ClassifierSpec s_;
};

Result<std::unique_ptr<Kernel>> create_tree_ensemble_classifier(CompileContext& ctx) {
  ClassifierSpec s;
  RECUR_ASSIGN_OR_RETURN(
      s.labels, ml::read_class_labels(ctx.node(), "classlabels_int64s", "classlabels_strings"));
  if (s.labels.size() == 0) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "neither classlabels_int64s nor classlabels_strings is set");
  }
  RECUR_ASSIGN_OR_RETURN(s.post, ml::read_post_transform(ctx.node()));
  RECUR_ASSIGN_OR_RETURN(s.base, ml::floats_or_tensor(ctx.node(), "base_values"));
  if (s.base.size() > 1 && static_cast<int64_t>(s.base.size()) != s.labels.size()) {
    return ctx.error(ErrorCode::kInvalidModel, "base_values has " + std::to_string(s.base.size()) +
                                                   " values for " +
                                                   std::to_string(s.labels.size()) + " classes");
  }
  RECUR_ASSIGN_OR_RETURN(s.trees, ml::read_legacy_trees(ctx.node(), "class", s.labels.size()));
  s.one_class_named = true;
  for (int64_t c : s.trees.output) s.one_class_named = s.one_class_named && c == s.trees.output[0];
  return std::make_unique<TreeEnsembleClassifierKernel>(std::move(s));
}

Status infer_tree_ensemble_classifier(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(
      ml::ClassLabels labels,
      ml::read_class_labels(ctx.node(), "classlabels_int64s", "classlabels_strings"));
  return ml::infer_scorer(ctx, &labels, 0, 1, labels.size() == 0 ? -1 : labels.size());
}

}  // namespace

void register_tree_ensemble_classifier(Registrar& r) {
  r.add({.op_type = "TreeEnsembleClassifier",
         .domain = kMlDomain,
         .since = 1,
         .create = create_tree_ensemble_classifier,
         .takes_strings = true},
        infer_tree_ensemble_classifier);
}

}  // namespace recur::reference
