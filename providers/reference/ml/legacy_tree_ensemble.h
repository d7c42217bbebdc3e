// The tree layout of TreeEnsembleClassifier and TreeEnsembleRegressor (ai.onnx.ml 1 and 3):
// parallel nodes_* lists naming nodes by (tree id, node id), and leaf contributions
// ({class,target}_treeids, _nodeids, _ids, _weights) naming their leaf the same way. It is
// resolved at load into indices, so a run follows plain array links.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/kernel.h"

namespace recur::reference::ml {

struct LegacyTrees {
  enum Mode : uint8_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kLeaf };
  struct TreeNode {
    Mode mode = kLeaf;
    bool missing_true = false;  // NaN takes the true branch
    int64_t feature = 0;
    double value = 0;
    int64_t child[2] = {0, 0};  // node indices: [true, false]
    int64_t first = 0;          // a leaf's contributions: [first, first + count)
    int64_t count = 0;
  };
  std::vector<TreeNode> nodes;
  std::vector<int64_t> roots;   // the first node of each tree, by ascending tree id
  std::vector<int64_t> output;  // per contribution: the class or target it adds to
  std::vector<double> weight;
  int64_t max_feature = -1;
  bool weights_all_positive = true;

  // X's rows and columns: X is [N, F] or [F] (one row) with every feature the trees read.
  Status check_input(const KernelContext& ctx, const Tensor& x, int64_t* rows, int64_t* cols) const;

  // Returns f(const T* data) for X's dtype T (float, double, int32 or int64), or an error
  // naming any other dtype.
  template <class F>
  static Status visit_x(const KernelContext& ctx, const Tensor& x, F&& f) {
    Status st;
    const bool ok = visit_dtype(TypeList<float, double, int32_t, int64_t>{}, x.dtype(),
                                [&](auto tag) { st = f(x.data<typename decltype(tag)::type>()); });
    if (ok) return st;
    return ctx.error(ErrorCode::kInvalidArgument, "X must be float, double, int32 or int64, not " +
                                                      std::string(dtype_name(x.dtype())));
  }

  // The leaf `row` (cols features of type T) reaches from `root`, or -1 if the walk takes more
  // steps than there are nodes (a cycle). Requires cols > max_feature.
  template <class T>
  int64_t leaf_of(int64_t root, const T* row) const {
    int64_t at = root;
    for (size_t step = 0; step <= nodes.size(); ++step) {
      const TreeNode& n = nodes[static_cast<size_t>(at)];
      if (n.mode == kLeaf) return at;
      at = n.child[branch(n, static_cast<double>(row[n.feature])) ? 0 : 1];
    }
    return -1;
  }

  static bool branch(const TreeNode& n, double x) {
    if (n.missing_true && std::isnan(x)) return true;
    switch (n.mode) {
      case kLeq:
        return x <= n.value;
      case kLt:
        return x < n.value;
      case kGte:
        return x >= n.value;
      case kGt:
        return x > n.value;
      case kEq:
        return x == n.value;
      default:
        return x != n.value;
    }
  }
};

// Reads the trees of `node`; `prefix` is "class" or "target", and each contribution's id must
// be below `n_outputs`.
Result<LegacyTrees> read_legacy_trees(const Node& node, const std::string& prefix,
                                      int64_t n_outputs);

// A float list attribute that may instead be given as a tensor (`name`_as_tensor, opset 3).
Result<std::vector<double>> floats_or_tensor(const Node& node, const std::string& name);

}  // namespace recur::reference::ml
