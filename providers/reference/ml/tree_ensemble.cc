// TreeEnsemble (ai.onnx.ml 5): sums (or averages, or takes the min or max of) the weights of
// the leaves that each row of X [N, F] reaches in every tree, per target: Y [N, n_targets].
// Comparisons are made in double, where every float and float16 value is exact. The sets of
// BRANCH_MEMBER nodes are read from membership_values in node order, as the spec describes.
// MIN and MAX start from the largest and lowest finite value of X's dtype, as the ONNX
// reference implementation does, so a target no leaf reaches keeps that value.
// Only post_transform NONE is implemented; the others are refused when loading.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

enum Mode : int64_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember };
enum Aggregate : int64_t { kAverage = 0, kSum, kMin, kMax };

struct TreeNode {
  int64_t mode = 0;
  int64_t feature = 0;
  double split = 0;
  std::vector<double> members;
  bool missing_true = false;
  int64_t child[2] = {0, 0};  // [true, false]
  bool leaf[2] = {false, false};
};

struct Ensemble {
  std::vector<TreeNode> nodes;
  std::vector<int64_t> roots;
  std::vector<int64_t> leaf_target;
  std::vector<double> leaf_weight;
  int64_t n_targets = 0;
  int64_t aggregate = kSum;
};

// The values of a floating or integer tensor attribute as doubles; empty if absent.
Result<std::vector<double>> doubles_of(const Node& node, const char* name, bool required) {
  AttrReader attrs(node);
  const Tensor* t = attrs.get_tensor(name);
  RECUR_RETURN_IF_ERROR(attrs.status());
  std::vector<double> out;
  if (!t) {
    if (required) return invalid_model(node.describe() + ": attribute " + name + " is required");
    return out;
  }
  const bool ok = visit_dtype(kNumericTypes, t->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t->numel(); ++i)
      out.push_back(static_cast<double>(to_compute(t->data<T>()[i])));
  });
  if (!ok) {
    return invalid_model(node.describe() + ": attribute " + name + " has dtype " +
                         std::string(dtype_name(t->dtype())));
  }
  return out;
}

bool compare(const TreeNode& n, double x) {
  if (std::isnan(x) && n.missing_true) return true;
  switch (n.mode) {
    case kLeq:
      return x <= n.split;
    case kLt:
      return x < n.split;
    case kGte:
      return x >= n.split;
    case kGt:
      return x > n.split;
    case kEq:
      return x == n.split;
    case kNeq:
      return x != n.split;
    default:
      for (double m : n.members) {
        if (m == x) return true;
      }
      return false;
  }
}

// Attaches the sets of the BRANCH_MEMBER nodes, NaN-delimited, in node order.
Status read_members(const Node& node, const std::vector<double>& values, Ensemble* e) {
  size_t pos = 0;
  for (TreeNode& n : e->nodes) {
    if (n.mode != kMember) continue;
    while (pos < values.size() && !std::isnan(values[pos])) n.members.push_back(values[pos++]);
    if (pos == values.size() && n.members.empty()) {
      return invalid_model(node.describe() + ": membership_values has fewer sets than there " +
                           "are BRANCH_MEMBER nodes");
    }
    ++pos;  // the NaN
  }
  return ok_status();
}

Status check_links(const Node& node, const Ensemble& e) {
  const auto n_nodes = static_cast<int64_t>(e.nodes.size());
  const auto n_leaves = static_cast<int64_t>(e.leaf_weight.size());
  for (const TreeNode& n : e.nodes) {
    for (int b = 0; b < 2; ++b) {
      const int64_t limit = n.leaf[b] ? n_leaves : n_nodes;
      if (n.child[b] < 0 || n.child[b] >= limit) {
        return invalid_model(node.describe() + ": a branch points at " +
                             (n.leaf[b] ? "leaf " : "node ") + std::to_string(n.child[b]) +
                             ", out of range");
      }
    }
    if (n.mode < kLeq || n.mode > kMember) {
      return invalid_model(node.describe() + ": node mode " + std::to_string(n.mode));
    }
    if (n.feature < 0) return invalid_model(node.describe() + ": negative feature id");
  }
  for (int64_t r : e.roots) {
    if (r < 0 || r >= n_nodes) {
      return invalid_model(node.describe() + ": tree root " + std::to_string(r) + " out of range");
    }
  }
  for (int64_t t : e.leaf_target) {
    if (t < 0 || t >= e.n_targets) {
      return invalid_model(node.describe() + ": leaf target " + std::to_string(t) +
                           " is not in [0, n_targets)");
    }
  }
  return ok_status();
}

Result<Ensemble> read_ensemble(const Node& node) {
  AttrReader attrs(node);
  Ensemble e;
  const auto features = attrs.get_ints("nodes_featureids");
  const auto true_ids = attrs.get_ints("nodes_truenodeids");
  const auto false_ids = attrs.get_ints("nodes_falsenodeids");
  const auto true_leafs = attrs.get_ints("nodes_trueleafs");
  const auto false_leafs = attrs.get_ints("nodes_falseleafs");
  const auto missing = attrs.get_ints("nodes_missing_value_tracks_true");
  e.leaf_target = attrs.get_ints("leaf_targetids");
  e.roots = attrs.get_ints("tree_roots");
  e.aggregate = attrs.get_int("aggregate_function", kSum);
  const int64_t post = attrs.get_int("post_transform", 0);
  const bool has_targets = attrs.has("n_targets");
  e.n_targets = attrs.get_int("n_targets", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  RECUR_ASSIGN_OR_RETURN(std::vector<double> splits, doubles_of(node, "nodes_splits", true));
  RECUR_ASSIGN_OR_RETURN(std::vector<double> modes, doubles_of(node, "nodes_modes", true));
  RECUR_ASSIGN_OR_RETURN(e.leaf_weight, doubles_of(node, "leaf_weights", true));
  RECUR_ASSIGN_OR_RETURN(std::vector<double> members, doubles_of(node, "membership_values", false));
  if (post != 0) {
    return not_implemented(node.describe() + ": post_transform " + std::to_string(post) +
                           " is not implemented (only NONE)");
  }
  if (e.aggregate < kAverage || e.aggregate > kMax) {
    return invalid_model(node.describe() + ": aggregate_function " + std::to_string(e.aggregate));
  }
  const size_t n = features.size();
  for (size_t len : {true_ids.size(), false_ids.size(), true_leafs.size(), false_leafs.size(),
                     splits.size(), modes.size()}) {
    if (len != n)
      return invalid_model(node.describe() + ": the nodes_* attributes differ in length");
  }
  if (!missing.empty() && missing.size() != n) {
    return invalid_model(node.describe() + ": nodes_missing_value_tracks_true has a wrong length");
  }
  if (e.leaf_target.size() != e.leaf_weight.size()) {
    return invalid_model(node.describe() + ": leaf_targetids and leaf_weights differ in length");
  }
  if (!has_targets) {
    for (int64_t t : e.leaf_target) e.n_targets = std::max(e.n_targets, t + 1);
  }
  e.nodes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TreeNode& t = e.nodes[i];
    t.mode = static_cast<int64_t>(modes[i]);
    t.feature = features[i];
    t.split = splits[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    t.child[0] = true_ids[i];
    t.child[1] = false_ids[i];
    t.leaf[0] = true_leafs[i] != 0;
    t.leaf[1] = false_leafs[i] != 0;
  }
  RECUR_RETURN_IF_ERROR(read_members(node, members, &e));
  RECUR_RETURN_IF_ERROR(check_links(node, e));
  return e;
}

template <class T>
double lowest_of() {
  if constexpr (std::is_same_v<T, Float16>) {
    return -65504.0;
  } else {
    return static_cast<double>(std::numeric_limits<T>::lowest());
  }
}

class TreeEnsembleKernel final : public Kernel {
 public:
  explicit TreeEnsembleKernel(Ensemble e) : e_(std::move(e)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be [N, F], got " + shape_to_string(x->shape()));
    }
    Status st;
    const bool ok = visit_dtype(TypeList<float, double, Float16>{}, x->dtype(), [&](auto tag) {
      st = run_typed<typename decltype(tag)::type>(ctx, *x);
    });
    if (!ok) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(x->dtype())) + " is not supported");
    }
    return st;
  }

 private:
  // The leaf that `row` reaches from `root`, or -1 after more steps than there are nodes.
  int64_t leaf_of(int64_t root, const std::vector<double>& row, int64_t* bad_feature) const {
    int64_t at = root;
    for (size_t step = 0; step <= e_.nodes.size(); ++step) {
      const TreeNode& n = e_.nodes[static_cast<size_t>(at)];
      int b = 0;
      if (!(n.leaf[0] && n.leaf[1] && n.child[0] == n.child[1])) {
        if (n.feature >= static_cast<int64_t>(row.size())) {
          *bad_feature = n.feature;
          return -1;
        }
        b = compare(n, row[static_cast<size_t>(n.feature)]) ? 0 : 1;
      }
      if (n.leaf[b]) return n.child[b];
      at = n.child[b];
    }
    return -1;
  }

  template <class T>
  Status run_typed(KernelContext& ctx, const Tensor& x) const {
    const int64_t rows = x.dim(0), cols = x.dim(1);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {rows, e_.n_targets}));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    std::vector<double> row(static_cast<size_t>(cols));
    std::vector<double> acc(static_cast<size_t>(e_.n_targets));
    const double start = e_.aggregate == kMin   ? -lowest_of<T>()
                         : e_.aggregate == kMax ? lowest_of<T>()
                                                : 0.0;
    const auto n_trees = static_cast<double>(e_.roots.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        row[static_cast<size_t>(c)] = static_cast<double>(to_compute(in[r * cols + c]));
      std::fill(acc.begin(), acc.end(), start);
      for (int64_t root : e_.roots) {
        int64_t bad_feature = -1;
        const int64_t leaf = leaf_of(root, row, &bad_feature);
        if (leaf < 0) {
          return ctx.error(
              ErrorCode::kInvalidArgument,
              bad_feature >= 0
                  ? "feature " + std::to_string(bad_feature) + " is out of range for X with " +
                        std::to_string(cols) + " features"
                  : std::string("the tree at node ") + std::to_string(root) + " has a cycle");
        }
        const double w = e_.leaf_weight[static_cast<size_t>(leaf)];
        double& a = acc[static_cast<size_t>(e_.leaf_target[static_cast<size_t>(leaf)])];
        if (e_.aggregate == kSum) a += w;
        if (e_.aggregate == kAverage) a += w / n_trees;
        if (e_.aggregate == kMin) a = std::min(a, w);
        if (e_.aggregate == kMax) a = std::max(a, w);
      }
      for (int64_t t = 0; t < e_.n_targets; ++t) {
        out[r * e_.n_targets + t] =
            from_compute<T>(static_cast<compute_t<T>>(acc[static_cast<size_t>(t)]));
      }
    }
    return ok_status();
  }

  Ensemble e_;
};

Result<std::unique_ptr<Kernel>> create_tree_ensemble(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(Ensemble e, read_ensemble(ctx.node()));
  return std::make_unique<TreeEnsembleKernel>(std::move(e));
}

Status infer_tree_ensemble(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  AttrReader attrs(ctx.node());
  TypeInfo out;
  out.dtype = x.dtype;
  if (attrs.has("n_targets")) {
    Dim n = x.shape && x.shape->size() == 2 ? (*x.shape)[0] : Dim{};
    out.shape = std::vector<Dim>{n, Dim{attrs.get_int("n_targets", 0), ""}};
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_tree_ensemble(Registrar& r) {
  r.add(
      {.op_type = "TreeEnsemble", .domain = kMlDomain, .since = 5, .create = create_tree_ensemble},
      infer_tree_ensemble);
}

}  // namespace recur::reference
