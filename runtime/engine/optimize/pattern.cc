#include "runtime/engine/optimize/pattern.h"

namespace recur::pattern {

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
