// Stacked RNN fusion: see optimizer.h and runtime/rnn/stacked_rnn.h.
#include <optional>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/rnn_glue.h"
#include "runtime/rnn/rnn_spec.h"
#include "runtime/rnn/stacked_rnn.h"

namespace recur {

namespace {

using rnn_glue::directions;
using rnn_glue::is_rnn;
using rnn_glue::sole_reader;

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

bool fusable_layer(const Graph& g, const Node& n) {
  if (!is_rnn(n) || !n.has_input(kRnnX)) return false;
  if (n.has_input(kRnnP)) return false;
  if (n.inputs.size() > kRnnP + 1) return false;
  if (!rnn_glue::layout0(n)) return false;
  return RnnSpec::parse(n).ok();
}

// The next layer of `a` and the glue nodes between, or nullptr.
const Node* next_layer(const Graph& g, const Node& a, std::vector<int>* glue) {
  const auto seq = rnn_glue::seq_glue(g, a);
  if (!seq) return nullptr;
  const Node* into = sole_reader(g, seq->seq);
  if (!into || !into->has_input(kRnnX) || into->inputs[kRnnX] != seq->seq) return nullptr;
  if (!fusable_layer(g, *into) || into->op_type != a.op_type || !same_attributes(a, *into) ||
      into->opset != a.opset)
    return nullptr;
  const ValueId la = a.has_input(kRnnSeqLens) ? a.inputs[kRnnSeqLens] : kNoValue;
  const ValueId lb = into->has_input(kRnnSeqLens) ? into->inputs[kRnnSeqLens] : kNoValue;
  if (la != lb) return nullptr;
  glue->insert(glue->end(), seq->nodes.begin(), seq->nodes.end());
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
