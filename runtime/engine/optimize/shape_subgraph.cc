#include "runtime/engine/optimize/shape_subgraph.h"

#include <array>
#include <deque>
#include <set>
#include <string_view>

#include "runtime/engine/optimize/evaluate.h"

namespace recur {

namespace {

// Constants up to this many elements may feed a shape computation (axes, indices, [0,0,-1]).
constexpr int64_t kSmallConstant = 4096;

bool is_shape_source(const Node& n) {
  return n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size");
}

// Operators that, over shape values, compute shape values. Expand, Tile, Range and
// ConstantOfShape are left out: their outputs can be large data tensors.
bool is_shape_arithmetic(const Node& n) {
  static const std::set<std::string, std::less<>> kOps = {
      "Gather",    "Slice",   "Concat",   "Unsqueeze",  "Squeeze",     "Cast",
      "Reshape",   "Flatten", "Identity", "Add",        "Sub",         "Mul",
      "Div",       "Mod",     "Neg",      "Abs",        "Min",         "Max",
      "Floor",     "Ceil",    "Sign",     "ReduceProd", "ReduceSum",   "ReduceMin",
      "ReduceMax", "Equal",   "Less",     "Greater",    "LessOrEqual", "GreaterOrEqual",
      "Not",       "And",     "Or",       "Where",      "Size",        "Shape"};
  return n.domain.empty() && kOps.count(n.op_type) > 0 && n.attributes.count("then_branch") == 0;
}

bool int_or_bool(DType t) { return t == DType::kInt64 || t == DType::kInt32 || t == DType::kBool; }

bool small_constant(const Graph& g, ValueId v) {
  const Tensor* t = g.constant(v);
  return t && t->numel() <= kSmallConstant;
}

}  // namespace

std::vector<char> find_host_shape_nodes(const Graph& graph) {
  std::vector<char> host(graph.nodes().size(), 0);
  std::vector<char> shape_value(graph.num_values(), 0);
  for (int idx : graph.topo_order()) {
    const Node& n = graph.node(idx);
    bool on_host = false;
    if (is_shape_source(n)) {
      on_host = true;
    } else if (is_shape_arithmetic(n)) {
      bool any_shape = false, all_ok = true;
      for (ValueId v : n.inputs) {
        if (v == kNoValue) continue;
        if (shape_value[static_cast<size_t>(v)]) {
          any_shape = true;
        } else if (!small_constant(graph, v)) {
          all_ok = false;
        }
      }
      on_host = any_shape && all_ok;
      for (ValueId o : n.outputs) {
        if (o == kNoValue) continue;
        const DType t = graph.value(o).type.dtype;
        if (t != DType::kUndefined && !int_or_bool(t)) on_host = false;
      }
    }
    if (!on_host) continue;
    host[static_cast<size_t>(idx)] = 1;
    for (ValueId o : n.outputs)
      if (o != kNoValue) shape_value[static_cast<size_t>(o)] = 1;
  }
  return host;
}

Status fold_shape_subgraphs(Graph& graph, const ExecutionProvider& host,
                            const SessionOptions& options, std::vector<std::string>* folded) {
  std::vector<bool> dead(graph.nodes().size(), false);
  bool any = false;
  for (int idx : graph.topo_order()) {
    const Node& n = graph.node(idx);
    if (!is_shape_source(n) && !is_shape_arithmetic(n)) continue;
    bool outputs_ok = !n.outputs.empty();
    for (ValueId o : n.outputs) {
      if (o == kNoValue || graph.value(o).is_graph_output) outputs_ok = false;
    }
    if (!outputs_ok) continue;

    // The node's inputs: constants, or for Shape and Size a data-less stand-in of a value
    // whose shape is static.
    std::vector<Tensor> frame(n.inputs.size());
    bool known = true;
    for (size_t i = 0; i < n.inputs.size() && known; ++i) {
      const ValueId v = n.inputs[i];
      if (v == kNoValue) continue;
      if (const Tensor* c = graph.constant(v)) {
        known = c->numel() <= kSmallConstant || is_shape_source(n);
        frame[i] = *c;
        continue;
      }
      const TypeInfo& t = graph.value(v).type;
      if (is_shape_source(n) && i == 0 && t.is_static()) {
        const DType dt = t.dtype == DType::kUndefined ? DType::kFloat32 : t.dtype;
        frame[i] = Tensor::borrow(nullptr, dt, t.static_shape());
        continue;
      }
      known = false;
    }
    if (!known) continue;
    // A node that fails here is left for run time, which reports it with the inputs in view.
    // Outputs over kSmallConstant elements are dropped below: 1 MiB is room enough.
    Result<std::vector<Tensor>> outs =
        evaluate_at_load(graph, n, std::move(frame), host, options, size_t{1} << 20);
    if (!outs.ok()) continue;
    bool small = true;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Tensor& t = outs.value()[i];
      small = small && t.defined() && t.is_cpu() && t.numel() <= kSmallConstant &&
              (t.numel() == 0 || t.raw_data() != nullptr) && int_or_bool(t.dtype());
    }
    if (!small) continue;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      graph.set_initializer(n.outputs[i], outs.value()[i].clone());
    }
    dead[static_cast<size_t>(idx)] = true;
    any = true;
    if (folded) folded->push_back(n.name + " (" + n.op_type + ")");
  }
  if (!any) return ok_status();
  graph.remove_nodes(dead);
  return graph.finalize();
}

}  // namespace recur
