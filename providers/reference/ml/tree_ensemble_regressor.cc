// TreeEnsembleRegressor (ai.onnx.ml 1, 3): per row of X [N, F] (or [F]), the leaf each tree
// reaches adds its (target, weight) contributions, combined by aggregate_function (SUM, AVERAGE
// over the trees, MIN, MAX); then base_values are added and post_transform applied. Y is
// float [N, n_targets]. Comparisons are made in double on X's own values, so a double X is not
// rounded to float first. A target that no reached leaf names is 0 before base_values under MIN
// and MAX too, not the dtype's extreme.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/legacy_tree_ensemble.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

enum class Aggregate { kSum, kAverage, kMin, kMax };

struct RegressorSpec {
  ml::LegacyTrees trees;
  int64_t n_targets = 1;
  Aggregate aggregate = Aggregate::kSum;
  std::vector<double> base;
  ml::PostTransform post = ml::PostTransform::kNone;
};

class TreeEnsembleRegressorKernel final : public Kernel {
 public:
  explicit TreeEnsembleRegressorKernel(RegressorSpec s) : s_(std::move(s)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    int64_t rows = 0, cols = 0;
    RECUR_RETURN_IF_ERROR(s_.trees.check_input(ctx, *x, &rows, &cols));
    RECUR_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output(0, DType::kFloat32, {rows, s_.n_targets}));
    return ml::LegacyTrees::visit_x(
        ctx, *x, [&](const auto* in) { return score(ctx, in, rows, cols, y->data<float>()); });
  }

 private:
  template <class T>
  Status score(const KernelContext& ctx, const T* in, int64_t rows, int64_t cols,
               float* out) const {
    const auto& t = s_.trees;
    const auto n = static_cast<size_t>(s_.n_targets);
    std::vector<double> acc(n);
    std::vector<char> seen(n);
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(acc.begin(), acc.end(), 0.0);
      std::fill(seen.begin(), seen.end(), 0);
      for (int64_t root : t.roots) {
        const int64_t leaf = t.leaf_of(root, in + r * cols);
        if (leaf < 0) return ctx.error(ErrorCode::kInvalidArgument, "a tree has a cycle");
        const auto& node = t.nodes[static_cast<size_t>(leaf)];
        for (int64_t k = node.first; k < node.first + node.count; ++k) {
          const auto target = static_cast<size_t>(t.output[static_cast<size_t>(k)]);
          const double w = t.weight[static_cast<size_t>(k)];
          double& a = acc[target];
          if (s_.aggregate == Aggregate::kMin) {
            a = seen[target] ? std::min(a, w) : w;
          } else if (s_.aggregate == Aggregate::kMax) {
            a = seen[target] ? std::max(a, w) : w;
          } else {
            a += w;
          }
          seen[target] = 1;
        }
      }
      float* o = out + r * s_.n_targets;
      for (size_t j = 0; j < n; ++j) {
        double v = acc[j];
        if (s_.aggregate == Aggregate::kAverage) v /= static_cast<double>(t.roots.size());
        if (!s_.base.empty()) v += s_.base[s_.base.size() == 1 ? 0 : j];
        o[j] = static_cast<float>(v);
      }
      ml::post_transform_row(s_.post, o, s_.n_targets);
    }
    return ok_status();
  }

  RegressorSpec s_;
};

Result<std::unique_ptr<Kernel>> create_tree_ensemble_regressor(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  RegressorSpec s;
  s.n_targets = attrs.get_int("n_targets", 1);
  const std::string aggregate = attrs.get_string("aggregate_function", "SUM");
  RECUR_RETURN_IF_ERROR(attrs.status());
  // The bound keeps a few bytes of attribute from asking for gigabytes of scores per row.
  constexpr int64_t kMaxTargets = int64_t{1} << 24;
  if (s.n_targets < 1 || s.n_targets > kMaxTargets) {
    return ctx.error(ErrorCode::kInvalidModel, "n_targets is " + std::to_string(s.n_targets) +
                                                   "; it must be in [1, " +
                                                   std::to_string(kMaxTargets) + "]");
  }
  if (aggregate == "SUM") {
    s.aggregate = Aggregate::kSum;
  } else if (aggregate == "AVERAGE") {
    s.aggregate = Aggregate::kAverage;
  } else if (aggregate == "MIN") {
    s.aggregate = Aggregate::kMin;
  } else if (aggregate == "MAX") {
    s.aggregate = Aggregate::kMax;
  } else {
    return ctx.error(ErrorCode::kInvalidModel,
                     "aggregate_function '" + aggregate + "' is not SUM, AVERAGE, MIN or MAX");
  }
  RECUR_ASSIGN_OR_RETURN(s.post, ml::read_post_transform(ctx.node()));
  RECUR_ASSIGN_OR_RETURN(s.base, ml::floats_or_tensor(ctx.node(), "base_values"));
  if (s.base.size() > 1 && static_cast<int64_t>(s.base.size()) != s.n_targets) {
    return ctx.error(ErrorCode::kInvalidModel, "base_values has " + std::to_string(s.base.size()) +
                                                   " values for " + std::to_string(s.n_targets) +
                                                   " target(s)");
  }
  RECUR_ASSIGN_OR_RETURN(s.trees, ml::read_legacy_trees(ctx.node(), "target", s.n_targets));
  return std::make_unique<TreeEnsembleRegressorKernel>(std::move(s));
}

Status infer_tree_ensemble_regressor(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  return ml::infer_scorer(ctx, nullptr, -1, 0, attrs.get_int("n_targets", 1));
}

}  // namespace

void register_tree_ensemble_regressor(Registrar& r) {
  r.add({.op_type = "TreeEnsembleRegressor",
         .domain = kMlDomain,
         .since = 1,
         .create = create_tree_ensemble_regressor},
        infer_tree_ensemble_regressor);
}

}  // namespace recur::reference
