#include "runtime/engine/optimize/optimizer.h"

#include <vector>

namespace recur {

Status fold_constant_nodes(Graph& graph) {
  std::vector<bool> dead(graph.nodes().size(), false);
  bool any = false;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    Node& node = graph.mutable_node(static_cast<int>(i));
    for (auto& [name, a] : node.attributes) {
      if (a.g) RECUR_RETURN_IF_ERROR(fold_constant_nodes(*a.g));
      for (auto& g : a.graphs) RECUR_RETURN_IF_ERROR(fold_constant_nodes(*g));
    }
    if (!node.domain.empty() || node.op_type != "Constant" || node.outputs.size() != 1 ||
        node.outputs[0] == kNoValue) {
      continue;
    }
    // A form recur cannot fold is left for the kernel, which reports it.
    Result<Tensor> t = constant_node_value(node);
    if (!t.ok()) continue;
    graph.set_initializer(node.outputs[0], std::move(t).value());
    dead[static_cast<size_t>(node.index)] = true;
    any = true;
  }
  if (!any) return ok_status();
  graph.remove_nodes(dead);
  return graph.finalize();
}

Status optimize_graph(Graph& graph) {
  RECUR_RETURN_IF_ERROR(fold_constant_nodes(graph));
  RECUR_RETURN_IF_ERROR(fold_batchnorm_into_conv(graph));
  return drop_unread_rnn_states(graph);
}

}  // namespace recur
