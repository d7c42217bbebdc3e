// Helpers of the fusions that replace chains of ONNX nodes by one (fuse_conv.cc, fuse_gelu.cc,
// fuse_layer_norm.cc): the driver that finds and replaces them, and the tests on constants,
// sole readers and operands their matchers share.
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/graph/graph.h"

namespace recur::pattern {

// One match: `fused` takes the place of nodes[0] (it keeps that index) and the other nodes go.
struct Replacement {
  Node fused;
  std::vector<int> nodes;
};
using Matcher = std::function<std::optional<Replacement>(const Graph&, const Node&)>;

// The node of the default ONNX domain that replaces `nodes`: nodes[0]'s name, and a note for
// --explain: "fused the <what> written as <op> '<name>' and '<name>', ... into one <op_type>
// (opset N) node".
Node replacement_node(const Graph& g, const std::vector<int>& nodes, const char* what,
                      std::string op_type, int opset, std::vector<ValueId> inputs,
                      std::vector<ValueId> outputs);

// Offers every node of `graph` and its subgraphs, in topological order, to `match`; each match
// that shares no node with an earlier one and that `accept` agrees to (given nodes[0] and the
// fused node) is made. The graph is finalized again where anything changed.
Status replace_matches(Graph& graph, const Matcher& match, const NodeFusionFilter& accept);

// The value of `v` if it is a one-element floating constant of dtype `t` (float32 or float64,
// not overridable at run time) no larger in rank than `max_rank`, so that broadcasting it
// changes no shape.
inline std::optional<double> scalar_constant(const Graph& g, ValueId v, DType t, int64_t max_rank) {
  if (v == kNoValue) return std::nullopt;
  const Tensor* c = g.constant(v);
  if (!c || c->dtype() != t || c->numel() != 1 || c->rank() > max_rank) return std::nullopt;
  if (t == DType::kFloat32) return static_cast<double>(c->data<float>()[0]);
  if (t == DType::kFloat64) return c->data<double>()[0];
  return std::nullopt;
}

// |v - want| within 1e-6 of want (a few float32 steps).
inline bool near(double v, double want) { return std::fabs(v - want) <= 1e-6 * std::fabs(want); }

// `base`, or `base` with the first suffix _1, _2, ... that no value of `g` has: the name of a
// value a rewrite adds.
inline std::string fresh_name(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 1; g.find(name) != kNoValue; ++k) name = base + "_" + std::to_string(k);
  return name;
}

// A plain ONNX node of op `op` with one output and no subgraph reads.
inline bool is_op(const Node& n, const char* op) {
  return n.domain.empty() && n.op_type == op && n.implicit_inputs.empty() &&
         n.outputs.size() == 1 && n.outputs[0] != kNoValue;
}

// Whether `v` is read by exactly `readers` nodes and is no graph output: a value a fusion may
// make disappear.
inline bool internal(const Graph& g, ValueId v, size_t readers = 1) {
  if (v == kNoValue) return false;
  const Value& val = g.value(v);
  return !val.is_graph_output && val.consumers.size() == readers;
}

// The node reading `v` if it is the only reader (and `v` no graph output), of the given op.
inline const Node* sole_reader(const Graph& g, ValueId v, const char* op) {
  if (!internal(g, v)) return nullptr;
  const Node& n = g.node(g.value(v).consumers[0]);
  return is_op(n, op) ? &n : nullptr;
}

// For a binary node reading `v`: its other operand, or kNoValue.
inline ValueId other_operand(const Node& n, ValueId v) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return kNoValue;
}

}  // namespace recur::pattern
