// Optional RNN outputs that nothing reads are dropped, as if the model had left their names
// empty: a kernel then neither computes nor writes them. An exporter names every output of an
// LSTM even where only Y is used, and a final state that nothing reads still costs work: the
// oneDNN kernel needs Y_c to chain the segments of unequal sequence lengths and otherwise runs
// them as one padded segment.
#include <vector>

#include "runtime/engine/optimize/optimizer.h"

namespace recur {

namespace {

bool is_rnn(const Node& n) {
  return n.domain.empty() && (n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN");
}

}  // namespace

Status drop_unread_rnn_states(Graph& graph) {
  bool any = false;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    Node& node = graph.mutable_node(static_cast<int>(i));
    for (auto& [name, a] : node.attributes) {
      if (a.g) RECUR_RETURN_IF_ERROR(drop_unread_rnn_states(*a.g));
      for (auto& g : a.graphs) RECUR_RETURN_IF_ERROR(drop_unread_rnn_states(*g));
    }
    if (!is_rnn(node)) continue;
    // Y (output 0) stays: kernels write it as their working buffer.
    for (size_t o = 1; o < node.outputs.size(); ++o) {
      const ValueId v = node.outputs[o];
      if (v == kNoValue) continue;
      const Value& val = graph.value(v);
      if (val.is_graph_output || !val.consumers.empty()) continue;
      node.outputs[o] = kNoValue;
      any = true;
    }
  }
  return any ? graph.finalize() : ok_status();
}

}  // namespace recur
