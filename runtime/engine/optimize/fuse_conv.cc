#include <string>
#include <vector>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"
#include "runtime/graph/fused_conv.h"

namespace recur {

namespace {

// The activation node that alone reads `conv`'s output, or nullptr.
const Node* sole_activation(const Graph& g, const Node& conv) {
  if (conv.outputs.size() != 1 || conv.outputs[0] == kNoValue) return nullptr;
  const Value& y = g.value(conv.outputs[0]);
  if (y.is_graph_output || y.consumers.size() != 1) return nullptr;
  const Node& act = g.node(y.consumers[0]);
  if (!act.domain.empty() || !fusable_conv_activation(act.op_type)) return nullptr;
  // HardSwish exists from opset 14: an earlier one is an error the node itself must report.
  if (act.op_type == "HardSwish" && act.opset < 14) return nullptr;
  if (act.inputs.size() != 1 || act.inputs[0] != conv.outputs[0] || !act.implicit_inputs.empty())
    return nullptr;
  if (act.outputs.size() != 1 || act.outputs[0] == kNoValue) return nullptr;
  return &act;
}

Node fused_node(const Node& conv, const Node& act) {
  Node f = conv;
  f.domain = kFusedConvDomain;
  f.op_type = kFusedConvOp;
  f.opset = 1;
  f.outputs = act.outputs;
  Attribute a;
  a.type = AttrType::kString;
  a.s = act.op_type;
  f.attributes[kFusedConvActivation] = std::move(a);
  if (const Attribute* alpha = act.attr("alpha")) f.attributes[kFusedConvAlpha] = *alpha;
  f.notes.push_back("fused Conv '" + conv.name + "' and " + act.op_type + " '" + act.name +
                    "' into one node: the activation is applied to the Conv's output as it is "
                    "written");
  return f;
}

}  // namespace

Status fuse_conv_activations(Graph& graph, const NodeFusionFilter& accept) {
  auto match = [](const Graph& g, const Node& conv) -> std::optional<pattern::Replacement> {
    if (!conv.domain.empty() || conv.op_type != "Conv") return std::nullopt;
    const Node* act = sole_activation(g, conv);
    if (!act) return std::nullopt;
    return pattern::Replacement{fused_node(conv, *act), {conv.index, act->index}};
  };
  return pattern::replace_matches(graph, match, accept);
}

}  // namespace recur
