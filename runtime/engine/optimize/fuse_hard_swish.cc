// HardSwish fusion: exporters before opset 14 (PyTorch's nn.Hardswish, MobileNetV3 backbones in
// OCR and keyword-spotting front ends) write x * HardSigmoid(x) with alpha 1/6 and beta 0.5,
//
//   y = Mul(x, HardSigmoid(x, alpha = 1/6, beta = 0.5))     (either operand order)
//
// which becomes one HardSwish node of opset 14: one pass over the tensor instead of two, on
// oneDNN's eltwise instead of the reference provider's Mul. The HardSigmoid's output must be
// read by the Mul alone, and x be float32 or float64.
#include <optional>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"

namespace recur {

namespace {

std::optional<pattern::Replacement> match_at(const Graph& g, const Node& hs) {
  if (!pattern::is_op(hs, "HardSigmoid") || hs.inputs.size() != 1) return std::nullopt;
  const ValueId x = hs.inputs[0];
  const DType t = g.value(x).type.dtype;
  if (t != DType::kFloat32 && t != DType::kFloat64) return std::nullopt;
  const Attribute* alpha = hs.attr("alpha");
  const Attribute* beta = hs.attr("beta");
  // alpha's default (0.2) is not HardSwish's; beta's (0.5) is, and PyTorch leaves it out.
  if (!alpha || alpha->type != AttrType::kFloat || !pattern::near(alpha->f, 1.0 / 6.0))
    return std::nullopt;
  if (beta && (beta->type != AttrType::kFloat || !pattern::near(beta->f, 0.5))) return std::nullopt;
  const Node* mul = pattern::sole_reader(g, hs.outputs[0], "Mul");
  if (!mul || pattern::other_operand(*mul, hs.outputs[0]) != x) return std::nullopt;
  const std::vector<int> nodes = {hs.index, mul->index};
  return pattern::Replacement{
      pattern::replacement_node(g, nodes, "HardSwish", "HardSwish", 14, {x}, {mul->outputs[0]}),
      nodes};
}

}  // namespace

Status fuse_hard_swishes(Graph& graph, const NodeFusionFilter& accept) {
  return pattern::replace_matches(graph, match_at, accept);
}

}  // namespace recur
