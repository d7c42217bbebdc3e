// Swish fusions: exporters write an activation gated by itself as two nodes,
//
//   y = Mul(x, HardSigmoid(x, alpha = 1/6, beta = 0.5))     (either operand order)
//   y = Mul(x, Sigmoid(x))
//
// the first before opset 14 (PyTorch's nn.Hardswish: MobileNetV3 backbones in OCR and
// keyword-spotting front ends), the second at every opset (nn.SiLU: Conformer and EfficientNet
// blocks). They become one HardSwish node of opset 14 and one Swish node of opset 24 (alpha 1):
// one pass over the tensor instead of two, on oneDNN's eltwise, and an activation that the
// Conv fusion (HardSwish) or the MatMul fusion (Swish) then takes into the product. The gate's
// output must be read by the Mul alone, and x be float32 or float64. Only where the provider
// that runs the gate runs the fused node (cuda-generic has no Swish: a GPU plan keeps both).
#include <optional>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"

namespace recur {

namespace {

// HardSigmoid with HardSwish's constants (alpha's default, 0.2, is not HardSwish's; beta's,
// 0.5, is, and PyTorch leaves it out).
bool hard_swish_gate(const Node& hs) {
  const Attribute* alpha = hs.attr("alpha");
  const Attribute* beta = hs.attr("beta");
  if (!alpha || alpha->type != AttrType::kFloat || !pattern::near(alpha->f, 1.0 / 6.0))
    return false;
  return !beta || (beta->type == AttrType::kFloat && pattern::near(beta->f, 0.5));
}

std::optional<pattern::Replacement> match_at(const Graph& g, const Node& gate) {
  const bool hard = pattern::is_op(gate, "HardSigmoid");
  if ((!hard && !pattern::is_op(gate, "Sigmoid")) || gate.inputs.size() != 1) return std::nullopt;
  const ValueId x = gate.inputs[0];
  const DType t = g.value(x).type.dtype;
  if (t != DType::kFloat32 && t != DType::kFloat64) return std::nullopt;
  if (hard && !hard_swish_gate(gate)) return std::nullopt;
  const Node* mul = pattern::sole_reader(g, gate.outputs[0], "Mul");
  if (!mul || pattern::other_operand(*mul, gate.outputs[0]) != x) return std::nullopt;
  const std::vector<int> nodes = {gate.index, mul->index};
  return pattern::Replacement{
      hard ? pattern::replacement_node(g, nodes, "HardSwish", "HardSwish", 14, {x},
                                       {mul->outputs[0]})
           : pattern::replacement_node(g, nodes, "Swish", "Swish", 24, {x}, {mul->outputs[0]}),
      nodes};
}

}  // namespace

Status fuse_swishes(Graph& graph, const NodeFusionFilter& accept) {
  return pattern::replace_matches(graph, match_at, accept);
}

}  // namespace recur
