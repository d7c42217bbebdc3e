// GELU fusion: the exact GELU that exporters before opset 20 write as five nodes,
//
//   y = Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)        (PyTorch's nn.GELU)
//   y = Mul(Mul(x, 0.5), Add(Erf(Mul(x, 1/sqrt 2)), 1))      (x * 0.5 * (1 + erf(x / sqrt 2)))
//
// with Mul and Add in either operand order, becomes one Gelu node of opset 20, which oneDNN
// runs in one pass (its gelu_erf) instead of five over the whole tensor. The constants must be
// scalars of x's type within a few float32 steps of sqrt 2 (or its inverse), 1 and 0.5, and
// every intermediate value read by the pattern alone.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"

namespace recur {

namespace {

using pattern::near;
using pattern::other_operand;
using pattern::scalar_constant;
using pattern::sole_reader;

struct Match {
  ValueId x = kNoValue, y = kNoValue;
  std::vector<int> nodes;  // the five, the Erf first
};

// The pattern around `erf`, or nullopt.
std::optional<Match> match_at(const Graph& g, const Node& erf) {
  if (erf.inputs.size() != 1 || erf.outputs.size() != 1 || erf.outputs[0] == kNoValue)
    return std::nullopt;
  const Value& in = g.value(erf.inputs[0]);
  if (in.producer < 0 || in.is_graph_output || in.consumers.size() != 1) return std::nullopt;
  const Node& scale = g.node(in.producer);  // Div(x, sqrt 2) or Mul(x, 1 / sqrt 2)
  if (!scale.domain.empty() || scale.inputs.size() != 2 || !scale.implicit_inputs.empty())
    return std::nullopt;
  const TypeInfo& xt = g.value(scale.inputs[0]).type;
  const DType t = xt.dtype;
  // A constant of rank 1 broadcast against a scalar x would make the output [1].
  const int64_t max_rank = xt.has_rank() ? xt.rank() : 0;
  Match m;
  if (scale.op_type == "Div") {
    m.x = scale.inputs[0];
    auto c = scalar_constant(g, scale.inputs[1], t, max_rank);
    if (!c || !near(*c, std::sqrt(2.0))) return std::nullopt;
  } else if (scale.op_type == "Mul") {
    for (int k = 0; k < 2 && m.x == kNoValue; ++k) {
      auto c = scalar_constant(g, scale.inputs[static_cast<size_t>(1 - k)], t, max_rank);
      if (c && near(*c, std::sqrt(0.5))) m.x = scale.inputs[static_cast<size_t>(k)];
    }
    if (m.x == kNoValue) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (g.value(m.x).type.dtype != t || (t != DType::kFloat32 && t != DType::kFloat64))
    return std::nullopt;
  const Node* add = sole_reader(g, erf.outputs[0], "Add");
  if (!add) return std::nullopt;
  auto one = scalar_constant(g, other_operand(*add, erf.outputs[0]), t, max_rank);
  if (!one || !near(*one, 1.0)) return std::nullopt;
  const Node* mul = sole_reader(g, add->outputs[0], "Mul");
  if (!mul) return std::nullopt;
  const ValueId partner = other_operand(*mul, add->outputs[0]);
  const Node* half_node = nullptr;
  if (partner == m.x) {
    // PyTorch's form: Mul(x, 1 + erf), then Mul(., 0.5).
    half_node = sole_reader(g, mul->outputs[0], "Mul");
    if (!half_node) return std::nullopt;
    auto h = scalar_constant(g, other_operand(*half_node, mul->outputs[0]), t, max_rank);
    if (!h || !near(*h, 0.5)) return std::nullopt;
    m.y = half_node->outputs[0];
  } else {
    // Mul(Mul(x, 0.5), 1 + erf).
    if (partner == kNoValue) return std::nullopt;
    const Value& pv = g.value(partner);
    if (pv.producer < 0 || pv.is_graph_output || pv.consumers.size() != 1) return std::nullopt;
    half_node = &g.node(pv.producer);
    if (!half_node->domain.empty() || half_node->op_type != "Mul" ||
        other_operand(*half_node, m.x) == kNoValue) {
      return std::nullopt;
    }
    auto h = scalar_constant(g, other_operand(*half_node, m.x), t, max_rank);
    if (!h || !near(*h, 0.5)) return std::nullopt;
    m.y = mul->outputs[0];
  }
  m.nodes = {erf.index, scale.index, add->index, mul->index, half_node->index};
  return m;
}

Node gelu_node(const Graph& g, const Match& m) {
  Node f = pattern::replacement_node(g, m.nodes, "exact GELU", "Gelu", 20, {m.x}, {m.y});
  Attribute a;
  a.type = AttrType::kString;
  a.s = "none";
  f.attributes["approximate"] = std::move(a);
  return f;
}

}  // namespace

Status fuse_gelus(Graph& graph, const NodeFusionFilter& accept) {
  auto match = [](const Graph& g, const Node& erf) -> std::optional<pattern::Replacement> {
    if (!erf.domain.empty() || erf.op_type != "Erf") return std::nullopt;
    const std::optional<Match> m = match_at(g, erf);
    if (!m) return std::nullopt;
    return pattern::Replacement{gelu_node(g, *m), m->nodes};
  };
  return pattern::replace_matches(graph, match, accept);
}

}  // namespace recur
