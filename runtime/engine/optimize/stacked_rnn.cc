// Stacked RNN fusion: see optimizer.h and runtime/rnn/stacked_rnn.h.
#include <optional>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/rnn/rnn_spec.h"
#include "runtime/rnn/stacked_rnn.h"

namespace recur {

namespace {

bool is_rnn(const Node& n) {
  return n.domain.empty() && (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN");
}

bool same_attribute(const Attribute& a, const Attribute& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case AttrType::kFloat:
      return a.f == b.f;
    case AttrType::kInt:
      return a.i == b.i;
    case AttrType::kString:
      return a.s == b.s;
    case AttrType::kFloats:
      return a.floats == b.floats;
    case AttrType::kInts:
      return a.ints == b.ints;
    case AttrType::kStrings:
      return a.strings == b.strings;
    default:
      return false;  // tensors and graphs: never equal for this purpose
  }
}

bool same_attributes(const Node& a, const Node& b) {
  if (a.attributes.size() != b.attributes.size()) return false;
  for (const auto& [k, v] : a.attributes) {
    const Attribute* o = b.attr(k);
    if (!o || !same_attribute(v, *o)) return false;
  }
  return true;
}

// The int values of constant input i of `n`, or of attribute `attr` when the input is absent.
std::optional<std::vector<int64_t>> ints_of(const Graph& g, const Node& n, size_t i,
                                            const char* attr) {
  if (n.has_input(i)) {
    const Tensor* t = g.constant(n.inputs[i]);
    if (!t || !t->is_cpu()) return std::nullopt;
    std::vector<int64_t> v(static_cast<size_t>(t->numel()));
    for (int64_t k = 0; k < t->numel(); ++k) {
      if (t->dtype() == DType::kInt64) {
        v[static_cast<size_t>(k)] = t->data<int64_t>()[k];
      } else if (t->dtype() == DType::kInt32) {
        v[static_cast<size_t>(k)] = t->data<int32_t>()[k];
      } else {
        return std::nullopt;
      }
    }
    return v;
  }
  if (const Attribute* a = n.attr(attr); a && a->type == AttrType::kInts) return a->ints;
  return std::nullopt;
}

// The only reader of value v, if v has exactly one reader and is not a graph output.
const Node* sole_reader(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& val = g.value(v);
  if (val.is_graph_output || val.consumers.size() != 1) return nullptr;
  const Node& c = g.node(val.consumers.front());
  if (!c.implicit_inputs.empty()) return nullptr;
  int reads = 0;
  for (ValueId i : c.inputs) reads += i == v;
  return reads == 1 ? &c : nullptr;
}

int directions(const Node& rnn) {
  const Attribute* d = rnn.attr("direction");
  return d && d->type == AttrType::kString && d->s == "bidirectional" ? 2 : 1;
}

bool fusable_layer(const Graph& g, const Node& n) {
  if (!is_rnn(n) || !n.has_input(kRnnX)) return false;
  if (n.has_input(kRnnP)) return false;
  if (n.inputs.size() > kRnnP + 1) return false;
  if (const Attribute* l = n.attr("layout"); l && !(l->type == AttrType::kInt && l->i == 0))
    return false;
  return RnnSpec::parse(n).ok();
}

// The next layer of `a` and the glue nodes between, or nullptr.
const Node* next_layer(const Graph& g, const Node& a, std::vector<int>* glue) {
  if (!a.has_output(kRnnY)) return nullptr;
  const Node* g1 = sole_reader(g, a.outputs[kRnnY]);
  if (!g1 || !g1->domain.empty() || g1->outputs.size() != 1 || !g1->has_input(0) ||
      g1->inputs[0] != a.outputs[kRnnY])
    return nullptr;
  const int D = directions(a);
  const Node* into = nullptr;
  std::vector<int> used = {g1->index};
  if (D == 1) {
    if (g1->op_type != "Squeeze") return nullptr;
    auto axes = ints_of(g, *g1, 1, "axes");
    if (!axes || axes->size() != 1 || ((*axes)[0] != 1 && (*axes)[0] != -3)) return nullptr;
    into = sole_reader(g, g1->outputs[0]);
    if (into && (!into->has_input(kRnnX) || into->inputs[kRnnX] != g1->outputs[0])) return nullptr;
  } else {
    if (g1->op_type != "Transpose") return nullptr;
    const Attribute* perm = g1->attr("perm");
    if (!perm || perm->ints != std::vector<int64_t>{0, 2, 1, 3}) return nullptr;
    const Node* g2 = sole_reader(g, g1->outputs[0]);
    if (!g2 || !g2->domain.empty() || g2->op_type != "Reshape" || g2->outputs.size() != 1 ||
        g2->inputs.size() < 2 || g2->inputs[0] != g1->outputs[0])
      return nullptr;
    if (const Attribute* az = g2->attr("allowzero"); az && az->i != 0) return nullptr;
    auto shape = ints_of(g, *g2, 1, "shape");
    if (!shape || shape->size() != 3 || (*shape)[0] != 0 || (*shape)[1] != 0) return nullptr;
    if ((*shape)[2] != -1) {
      const Attribute* hs = a.attr("hidden_size");
      if (!hs || (*shape)[2] != 2 * hs->i) return nullptr;
    }
    used.push_back(g2->index);
    into = sole_reader(g, g2->outputs[0]);
    if (into && (!into->has_input(kRnnX) || into->inputs[kRnnX] != g2->outputs[0])) return nullptr;
  }
  if (!into || !fusable_layer(g, *into) || into->op_type != a.op_type ||
      !same_attributes(a, *into) || into->opset != a.opset)
    return nullptr;
  const ValueId la = a.has_input(kRnnSeqLens) ? a.inputs[kRnnSeqLens] : kNoValue;
  const ValueId lb = into->has_input(kRnnSeqLens) ? into->inputs[kRnnSeqLens] : kNoValue;
  if (la != lb) return nullptr;
  glue->insert(glue->end(), used.begin(), used.end());
  return into;
}

}  // namespace

Status fuse_stacked_rnns(Graph& graph, const FusionFilter& accept) {
  std::vector<bool> dead(graph.nodes().size(), false);
  std::vector<Node> fused_nodes;
  for (int idx : graph.topo_order()) {
    const Node& first = graph.node(idx);
    if (dead[static_cast<size_t>(idx)] || !fusable_layer(graph, first)) continue;
    // Only the start of a chain: a node fed by another fusable layer is part of that chain.
    std::vector<const Node*> layers = {&first};
    std::vector<int> glue;
    while (const Node* next = next_layer(graph, *layers.back(), &glue)) {
      if (dead[static_cast<size_t>(next->index)]) break;
      layers.push_back(next);
    }
    if (layers.size() < 2) continue;
    std::string name, names;
    for (const Node* l : layers) {
      name += (name.empty() ? "" : "+") + l->name;
      names += (names.empty() ? "" : ", ") + l->name;
    }
    Node fused = make_stacked_rnn_node(layers, name);
    if (accept && !accept(fused, graph)) continue;
    std::string glue_names;
    for (int gi : glue) glue_names += (glue_names.empty() ? "" : ", ") + graph.node(gi).name;
    fused.notes.push_back("fused " + std::to_string(layers.size()) + " " + first.op_type +
                          " layers into one node: " + names + " (glue removed: " + glue_names +
                          ")");
    for (const Node* l : layers) dead[static_cast<size_t>(l->index)] = true;
    for (int gi : glue) dead[static_cast<size_t>(gi)] = true;
    fused_nodes.push_back(std::move(fused));
  }
  if (fused_nodes.empty()) return ok_status();
  for (Node& f : fused_nodes) graph.add_node(std::move(f));
  dead.resize(graph.nodes().size(), false);
  graph.remove_nodes(dead);
  return graph.finalize();
}

}  // namespace recur
