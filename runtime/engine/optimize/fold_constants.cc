#include "runtime/engine/optimize/fold_constants.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "runtime/engine/optimize/evaluate.h"
#include "runtime/engine/optimize/shape_subgraph.h"

namespace recur {

namespace {

// Outputs may exceed the inputs by this much: a folded constant should not cost more memory
// than what it replaces, except for small ones (shapes, index lists, masks).
constexpr size_t kFreeOutputBytes = 64 * 1024;

bool has_subgraph(const Node& n) {
  for (const auto& [name, a] : n.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

bool foldable(const Graph& g, const Node& n) {
  if (!(n.domain.empty() || n.domain == "ai.onnx") || n.draws_random() || has_subgraph(n)) {
    return false;
  }
  bool any_input = false;
  for (ValueId v : n.inputs) {
    if (v == kNoValue) continue;
    if (!g.constant(v)) return false;
    any_input = true;
  }
  for (ValueId o : n.outputs)
    if (o != kNoValue && g.value(o).is_graph_output) return false;
  return any_input && !n.outputs.empty();
}

bool plain_host_tensor(const Tensor& t) {
  return t.is_tensor() && t.is_cpu() && t.dtype() != DType::kString &&
         (t.numel() == 0 || t.raw_data() != nullptr);
}

// Folds the nodes of `graph` whose inputs are all constants. Returns whether any was.
Result<bool> fold_constant_inputs(Graph& graph, const ExecutionProvider& host,
                                  const SessionOptions& options,
                                  std::set<ValueId>* inputs_of_folded,
                                  std::vector<std::string>* folded) {
  std::vector<bool> dead(graph.nodes().size(), false);
  bool any = false;
  for (int idx : graph.topo_order()) {
    const Node& n = graph.node(idx);
    if (!foldable(graph, n)) continue;
    std::vector<Tensor> inputs(n.inputs.size());
    size_t in_bytes = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == kNoValue) continue;
      inputs[i] = *graph.constant(n.inputs[i]);
      in_bytes += inputs[i].nbytes();
    }
    // A node that fails here is left for run time, which reports it with the inputs in view.
    // Its budget is what folding would keep (a larger output is dropped below), with room for
    // scratch.
    const size_t keep = std::max(in_bytes, kFreeOutputBytes);
    Result<std::vector<Tensor>> outs =
        evaluate_at_load(graph, n, std::move(inputs), host, options, 2 * keep + kFreeOutputBytes);
    if (!outs.ok()) continue;
    bool ok = true;
    size_t out_bytes = 0;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] == kNoValue) continue;
      const Tensor& t = outs.value()[i];
      ok = ok && plain_host_tensor(t);
      if (ok) out_bytes += t.nbytes();
    }
    if (!ok || out_bytes > std::max(in_bytes, kFreeOutputBytes)) continue;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] == kNoValue) continue;
      Tensor& t = outs.value()[i];
      // An output may be a view of a constant (Identity, Reshape): it shares that memory where
      // the memory is owned, and is copied where it is borrowed.
      graph.set_initializer(n.outputs[i], t.owner() ? std::move(t) : t.clone());
    }
    for (ValueId v : n.inputs)
      if (v != kNoValue) inputs_of_folded->insert(v);
    dead[static_cast<size_t>(idx)] = true;
    any = true;
    if (folded) folded->push_back(n.name + " (" + n.op_type + ")");
  }
  if (any) graph.remove_nodes(dead);
  return any;
}

// Makes the constants of `graph` that `sub` (a subgraph of `owner`) reads constants of `sub`.
// Returns the values of `graph` it gave away.
std::vector<ValueId> give_constants_to(const Graph& graph, Graph& sub) {
  std::vector<ValueId> given;
  for (ValueId r : outer_refs_read(sub)) {
    const ValueId here = graph.find(sub.value(r).name);
    if (here == kNoValue) continue;
    const Tensor* c = graph.constant(here);
    if (!c) continue;
    // The value stays listed among the outer references, no longer marked as one: the
    // planner maps only marked ones to the owner's implicit inputs (outer_refs_read).
    sub.mutable_value(r).is_outer = false;
    sub.set_initializer(r, *c);
    given.push_back(here);
  }
  return given;
}

// The owner's implicit inputs are what its subgraphs still read from outside.
void drop_unread_implicit_inputs(const Graph& graph, Node& owner) {
  std::set<std::string, std::less<>> read;
  for (const auto& [name, a] : owner.attributes) {
    if (a.g)
      for (ValueId r : outer_refs_read(*a.g)) read.insert(a.g->value(r).name);
    for (const auto& g : a.graphs)
      for (ValueId r : outer_refs_read(*g)) read.insert(g->value(r).name);
  }
  auto gone = [&](ValueId v) { return read.count(graph.value(v).name) == 0; };
  owner.implicit_inputs.erase(
      std::remove_if(owner.implicit_inputs.begin(), owner.implicit_inputs.end(), gone),
      owner.implicit_inputs.end());
}

}  // namespace

std::vector<ValueId> outer_refs_read(const Graph& sub) {
  std::vector<ValueId> out;
  for (ValueId r : sub.outer_refs())
    if (sub.value(r).is_outer) out.push_back(r);
  return out;
}

Status fold_constants(Graph& graph, const ExecutionProvider& host, const SessionOptions& options,
                      std::vector<std::string>* folded) {
  RECUR_RETURN_IF_ERROR(fold_shape_subgraphs(graph, host, options, folded));
  std::set<ValueId> maybe_unread;
  RECUR_ASSIGN_OR_RETURN(bool any,
                         fold_constant_inputs(graph, host, options, &maybe_unread, folded));
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    Node& node = graph.mutable_node(static_cast<int>(i));
    bool gave = false;
    for (auto& [name, a] : node.attributes) {
      std::vector<Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (auto& g : a.graphs) subs.push_back(g.get());
      for (Graph* sub : subs) {
        for (ValueId v : give_constants_to(graph, *sub)) {
          maybe_unread.insert(v);
          gave = true;
        }
        if (gave) RECUR_RETURN_IF_ERROR(sub->finalize());
        RECUR_RETURN_IF_ERROR(fold_constants(*sub, host, options, folded));
      }
    }
    if (gave) drop_unread_implicit_inputs(graph, node);
    any |= gave;
  }
  if (!any) return ok_status();
  RECUR_RETURN_IF_ERROR(graph.finalize());
  // Constants only the folded nodes or the subgraphs read are now held elsewhere, or not needed.
  for (ValueId v : maybe_unread) {
    const Value& val = graph.value(v);
    if (val.is_initializer && val.consumers.empty() && !val.is_graph_output &&
        !val.is_graph_input) {
      graph.remove_initializer(v);
    }
  }
  return ok_status();
}

}  // namespace recur
