#include "providers/reference/ml/legacy_tree_ensemble.h"

#include <algorithm>
#include <map>
#include <utility>

#include "providers/reference/common/dispatch.h"

namespace recur::reference::ml {

Status LegacyTrees::check_input(const KernelContext& ctx, const Tensor& x, int64_t* rows,
                                int64_t* cols) const {
  if (x.rank() != 1 && x.rank() != 2) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "X must be [N, F] or [F], got " + shape_to_string(x.shape()));
  }
  *cols = x.shape().back();
  *rows = x.rank() == 1 ? 1 : x.dim(0);
  if (max_feature >= *cols) {
    return ctx.error(ErrorCode::kInvalidArgument, "the trees read feature " +
                                                      std::to_string(max_feature) + " but X has " +
                                                      std::to_string(*cols));
  }
  return ok_status();
}

Result<std::vector<double>> floats_or_tensor(const Node& node, const std::string& name) {
  AttrReader attrs(node);
  const std::vector<float> floats = attrs.get_floats(name);
  const Tensor* t = attrs.get_tensor(name + "_as_tensor");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (t && !floats.empty()) {
    return invalid_model(node.describe() + ": " + name + " and " + name +
                         "_as_tensor are both set");
  }
  std::vector<double> out(floats.begin(), floats.end());
  if (t) {
    const bool ok = visit_dtype(TypeList<float, double>{}, t->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < t->numel(); ++i) out.push_back(static_cast<double>(t->data<T>()[i]));
    });
    if (!ok) {
      return invalid_model(node.describe() + ": " + name + "_as_tensor is " +
                           std::string(dtype_name(t->dtype())) + ", not float or double");
    }
  }
  return out;
}

namespace {

Result<LegacyTrees::Mode> mode_of(const Node& node, const std::string& s) {
  static const std::pair<const char*, LegacyTrees::Mode> kModes[] = {
      {"BRANCH_LEQ", LegacyTrees::kLeq}, {"BRANCH_LT", LegacyTrees::kLt},
      {"BRANCH_GTE", LegacyTrees::kGte}, {"BRANCH_GT", LegacyTrees::kGt},
      {"BRANCH_EQ", LegacyTrees::kEq},   {"BRANCH_NEQ", LegacyTrees::kNeq},
      {"LEAF", LegacyTrees::kLeaf}};
  for (const auto& [name, mode] : kModes) {
    if (s == name) return mode;
  }
  return invalid_model(node.describe() + ": nodes_modes has '" + s +
                       "', not a BRANCH_* mode or LEAF");
}

}  // namespace

Result<LegacyTrees> read_legacy_trees(const Node& node, const std::string& prefix,
                                      int64_t n_outputs) {
  AttrReader attrs(node);
  const auto tree_ids = attrs.get_ints("nodes_treeids");
  const auto node_ids = attrs.get_ints("nodes_nodeids");
  const auto features = attrs.get_ints("nodes_featureids");
  const auto modes = attrs.get_strings("nodes_modes");
  const auto true_ids = attrs.get_ints("nodes_truenodeids");
  const auto false_ids = attrs.get_ints("nodes_falsenodeids");
  const auto missing = attrs.get_ints("nodes_missing_value_tracks_true");
  const auto c_trees = attrs.get_ints(prefix + "_treeids");
  const auto c_nodes = attrs.get_ints(prefix + "_nodeids");
  const auto c_ids = attrs.get_ints(prefix + "_ids");
  RECUR_RETURN_IF_ERROR(attrs.status());
  RECUR_ASSIGN_OR_RETURN(std::vector<double> values, floats_or_tensor(node, "nodes_values"));
  RECUR_ASSIGN_OR_RETURN(std::vector<double> weights, floats_or_tensor(node, prefix + "_weights"));

  const std::string where = node.describe() + ": ";
  const size_t n = tree_ids.size();
  for (size_t len : {node_ids.size(), features.size(), modes.size(), true_ids.size(),
                     false_ids.size(), values.size()}) {
    if (len != n) {
      return invalid_model(where + "the nodes_* attributes differ in length (nodes_treeids has " +
                           std::to_string(n) + ", another has " + std::to_string(len) + ")");
    }
  }
  if (n == 0) return invalid_model(where + "the ensemble has no nodes");
  if (!missing.empty() && missing.size() != n) {
    return invalid_model(where + "nodes_missing_value_tracks_true has " +
                         std::to_string(missing.size()) + " entries for " + std::to_string(n) +
                         " nodes");
  }
  const size_t m = c_trees.size();
  if (c_nodes.size() != m || c_ids.size() != m || weights.size() != m) {
    return invalid_model(where + "the " + prefix + "_* attributes differ in length");
  }

  LegacyTrees t;
  std::map<std::pair<int64_t, int64_t>, int64_t> index;
  std::map<int64_t, int64_t> first_of_tree;
  t.nodes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), static_cast<int64_t>(i)).second) {
      return invalid_model(where + "node " + std::to_string(node_ids[i]) + " of tree " +
                           std::to_string(tree_ids[i]) + " is defined twice");
    }
    first_of_tree.emplace(tree_ids[i], static_cast<int64_t>(i));
    RECUR_ASSIGN_OR_RETURN(t.nodes[i].mode, mode_of(node, modes[i]));
    t.nodes[i].missing_true = !missing.empty() && missing[i] != 0;
    t.nodes[i].value = values[i];
    t.nodes[i].feature = features[i];
  }
  for (size_t i = 0; i < n; ++i) {
    LegacyTrees::TreeNode& tn = t.nodes[i];
    if (tn.mode == LegacyTrees::kLeaf) continue;
    if (tn.feature < 0) {
      return invalid_model(where + "node " + std::to_string(node_ids[i]) + " of tree " +
                           std::to_string(tree_ids[i]) + " reads feature " +
                           std::to_string(tn.feature));
    }
    t.max_feature = std::max(t.max_feature, tn.feature);
    const int64_t children[2] = {true_ids[i], false_ids[i]};
    for (int b = 0; b < 2; ++b) {
      auto it = index.find({tree_ids[i], children[b]});
      if (it == index.end()) {
        return invalid_model(where + "node " + std::to_string(node_ids[i]) + " of tree " +
                             std::to_string(tree_ids[i]) + " branches to node " +
                             std::to_string(children[b]) + ", which the tree does not have");
      }
      tn.child[b] = it->second;
    }
  }
  for (const auto& [tree, first] : first_of_tree) t.roots.push_back(first);

  // Contributions grouped by leaf, keeping their order within a leaf.
  std::vector<std::vector<size_t>> per_node(n);
  for (size_t k = 0; k < m; ++k) {
    auto it = index.find({c_trees[k], c_nodes[k]});
    if (it == index.end() || t.nodes[static_cast<size_t>(it->second)].mode != LegacyTrees::kLeaf) {
      return invalid_model(where + prefix + " entry " + std::to_string(k) + " names node " +
                           std::to_string(c_nodes[k]) + " of tree " + std::to_string(c_trees[k]) +
                           ", which is not a leaf of the ensemble");
    }
    if (c_ids[k] < 0 || c_ids[k] >= n_outputs) {
      return invalid_model(where + prefix + "_ids has " + std::to_string(c_ids[k]) +
                           ", outside [0, " + std::to_string(n_outputs) + ")");
    }
    per_node[static_cast<size_t>(it->second)].push_back(k);
  }
  for (size_t i = 0; i < n; ++i) {
    t.nodes[i].first = static_cast<int64_t>(t.output.size());
    t.nodes[i].count = static_cast<int64_t>(per_node[i].size());
    for (size_t k : per_node[i]) {
      t.output.push_back(c_ids[k]);
      t.weight.push_back(weights[k]);
      if (weights[k] < 0) t.weights_all_positive = false;
    }
  }
  return t;
}

}  // namespace recur::reference::ml
