// LayerNormalization fusion: the layer normalization that exporters before opset 17 write as
// nine nodes (PyTorch's nn.LayerNorm),
//
//   m = ReduceMean(x, axes)            v = ReduceMean(Pow(d, 2), axes)
//   d = Sub(x, m)                      n = Div(d, Sqrt(Add(v, eps)))
//   y = Add(Mul(n, weight), bias)
//
// with Mul and Add in either operand order, becomes one LayerNormalization node of opset 17,
// which oneDNN runs in one pass instead of nine over the tensor. The axes must be the last ones
// (the same for both means, kept), eps, 2, weight and bias constants of x's type (weight and
// bias no higher in rank than the normalised axes, so that they broadcast as LayerNormalization
// broadcasts Scale and B), and every intermediate value read by the pattern alone.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"

namespace recur {

namespace {

using pattern::internal;
using pattern::is_op;
using pattern::other_operand;
using pattern::scalar_constant;
using pattern::sole_reader;

// A ReduceMean's axes over the last dimensions, as a count (1: the last axis), or nullopt for
// any other reduction. `rank` is x's, or -1 where unknown.
std::optional<int64_t> trailing_axes(const Graph& g, const Node& mean, int64_t rank) {
  AttrReader a(mean);
  if (a.get_int("keepdims", 1) != 1) return std::nullopt;
  std::vector<int64_t> axes;
  if (mean.opset >= 18) {
    if (!mean.has_input(1)) return std::nullopt;
    const Tensor* t = g.constant(mean.inputs[1]);
    if (!t || t->dtype() != DType::kInt64 || t->rank() > 1) return std::nullopt;
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
  } else {
    axes = a.get_ints("axes");
  }
  if (!a.status().ok() || axes.empty()) return std::nullopt;
  for (int64_t& ax : axes) {
    if (ax >= 0) {
      if (rank < 0 || ax >= rank) return std::nullopt;
      ax -= rank;
    }
    if (rank >= 0 && ax < -rank) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  const auto k = static_cast<int64_t>(axes.size());
  for (int64_t i = 0; i < k; ++i)
    if (axes[static_cast<size_t>(i)] != i - k) return std::nullopt;
  return k;
}

// A constant of dtype `t` of rank at most `max_rank` (weight and bias).
bool affine_constant(const Graph& g, ValueId v, DType t, int64_t max_rank) {
  const Tensor* c = v == kNoValue ? nullptr : g.constant(v);
  return c && c->dtype() == t && c->rank() <= max_rank;
}

struct Match {
  ValueId x = kNoValue, weight = kNoValue, bias = kNoValue, y = kNoValue;
  int64_t axes = 0;
  double eps = 0;
  std::vector<int> nodes;  // the first ReduceMean first
};

std::optional<Match> match_at(const Graph& g, const Node& mean1) {
  if (!is_op(mean1, "ReduceMean") || mean1.inputs.empty() || mean1.inputs[0] == kNoValue)
    return std::nullopt;
  Match m;
  m.x = mean1.inputs[0];
  const TypeInfo& xt = g.value(m.x).type;
  const DType t = xt.dtype;
  if (t != DType::kFloat32 && t != DType::kFloat64) return std::nullopt;
  const int64_t rank = xt.has_rank() ? xt.rank() : -1;
  const auto axes = trailing_axes(g, mean1, rank);
  if (!axes) return std::nullopt;
  m.axes = *axes;
  const Node* sub = sole_reader(g, mean1.outputs[0], "Sub");
  if (!sub || sub->inputs.size() != 2 || sub->inputs[0] != m.x ||
      sub->inputs[1] != mean1.outputs[0] || !internal(g, sub->outputs[0], 2)) {
    return std::nullopt;
  }
  const ValueId d = sub->outputs[0];
  // d's two readers: Pow(d, 2) and Div(d, .), in either order.
  const Node* pow = nullptr;
  const Node* div = nullptr;
  for (int reader : g.value(d).consumers) {
    const Node& n = g.node(reader);
    if (is_op(n, "Pow") && n.inputs.size() == 2 && n.inputs[0] == d) pow = &n;
    if (is_op(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d) div = &n;
  }
  if (!pow || !div) return std::nullopt;
  const int64_t max_rank = std::max<int64_t>(rank, 0);
  const auto two = scalar_constant(g, pow->inputs[1], t, max_rank);
  if (!two || *two != 2.0) return std::nullopt;
  const Node* mean2 = sole_reader(g, pow->outputs[0], "ReduceMean");
  if (!mean2 || trailing_axes(g, *mean2, rank) != m.axes) return std::nullopt;
  const Node* add_eps = sole_reader(g, mean2->outputs[0], "Add");
  if (!add_eps) return std::nullopt;
  const auto eps = scalar_constant(g, other_operand(*add_eps, mean2->outputs[0]), t, max_rank);
  if (!eps || !(*eps >= 0.0)) return std::nullopt;
  m.eps = *eps;
  const Node* sqrt = sole_reader(g, add_eps->outputs[0], "Sqrt");
  if (!sqrt || !internal(g, sqrt->outputs[0]) || div->inputs[1] != sqrt->outputs[0])
    return std::nullopt;
  const Node* mul = sole_reader(g, div->outputs[0], "Mul");
  if (!mul) return std::nullopt;
  m.weight = other_operand(*mul, div->outputs[0]);
  if (!affine_constant(g, m.weight, t, m.axes)) return std::nullopt;
  const Node* add_bias = sole_reader(g, mul->outputs[0], "Add");
  if (!add_bias) return std::nullopt;
  m.bias = other_operand(*add_bias, mul->outputs[0]);
  if (!affine_constant(g, m.bias, t, m.axes)) return std::nullopt;
  m.y = add_bias->outputs[0];
  m.nodes = {mean1.index, sub->index, pow->index, mean2->index,   add_eps->index,
             sqrt->index, div->index, mul->index, add_bias->index};
  return m;
}

Node layer_norm_node(const Graph& g, const Match& m) {
  Node f = pattern::replacement_node(g, m.nodes, "layer normalization", "LayerNormalization", 17,
                                     {m.x, m.weight, m.bias}, {m.y});
  Attribute axis;
  axis.type = AttrType::kInt;
  axis.i = -m.axes;
  f.attributes["axis"] = std::move(axis);
  Attribute eps;
  eps.type = AttrType::kFloat;
  eps.f = static_cast<float>(m.eps);
  f.attributes["epsilon"] = std::move(eps);
  return f;
}

}  // namespace

Status fuse_layer_norms(Graph& graph, const NodeFusionFilter& accept) {
  auto match = [](const Graph& g, const Node& mean) -> std::optional<pattern::Replacement> {
    if (!is_op(mean, "ReduceMean")) return std::nullopt;
    const std::optional<Match> m = match_at(g, mean);
    if (!m) return std::nullopt;
    return pattern::Replacement{layer_norm_node(g, *m), m->nodes};
  };
  return pattern::replace_matches(graph, match, accept);
}

}  // namespace recur
