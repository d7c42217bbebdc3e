#include "runtime/engine/optimize/pattern.h"

#include <string>

namespace recur::pattern {

Node replacement_node(const Graph& g, const std::vector<int>& nodes, const char* what,
                      std::string op_type, int opset, std::vector<ValueId> inputs,
                      std::vector<ValueId> outputs) {
  const Node& first = g.node(nodes[0]);
  Node f;
  f.name = first.name;
  f.op_type = std::move(op_type);
  f.opset = opset;
  f.inputs = std::move(inputs);
  f.outputs = std::move(outputs);
  std::string names;
  for (size_t i = 1; i < nodes.size(); ++i)
    names += (i > 1 ? ", '" : "'") + g.node(nodes[i]).name + "'";
  f.notes.push_back("fused the " + std::string(what) + " written as " + first.op_type + " '" +
                    first.name + "' and " + names + " into one " + f.op_type + " (opset " +
                    std::to_string(opset) + ") node");
  return f;
}

Status replace_matches(Graph& graph, const Matcher& match, const NodeFusionFilter& accept) {
  for (const Node& n : graph.nodes()) {
    for (const auto& [name, a] : n.attributes) {
      if (a.g) RECUR_RETURN_IF_ERROR(replace_matches(*a.g, match, accept));
      for (const auto& g : a.graphs) RECUR_RETURN_IF_ERROR(replace_matches(*g, match, accept));
    }
  }
  std::vector<bool> dead(graph.nodes().size(), false);
  bool any = false;
  for (int idx : graph.topo_order()) {
    if (dead[static_cast<size_t>(idx)]) continue;
    std::optional<Replacement> r = match(graph, graph.node(idx));
    if (!r || r->nodes.empty()) continue;
    bool taken = false;
    for (int k : r->nodes) taken = taken || dead[static_cast<size_t>(k)];
    if (taken) continue;
    const int keep = r->nodes[0];
    if (accept && !accept(graph.node(keep), r->fused, graph)) continue;
    for (size_t i = 1; i < r->nodes.size(); ++i) dead[static_cast<size_t>(r->nodes[i])] = true;
    r->fused.index = keep;
    graph.mutable_node(keep) = std::move(r->fused);
    any = true;
  }
  if (!any) return ok_status();
  graph.remove_nodes(dead);
  return graph.finalize();
}

}  // namespace recur::pattern
