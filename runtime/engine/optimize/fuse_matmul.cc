// MatMul + Add of a constant bias (+ Relu, Gelu or SiLU) -> recur::MatMulBias (runtime/graph/
// matmul_bias.h).
#include <optional>
#include <string>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"
#include "runtime/graph/matmul_bias.h"

namespace recur {

namespace {

// The node that alone reads `v` (which is no graph output), or nullptr.
const Node* sole_reader(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& value = g.value(v);
  if (value.is_graph_output || value.consumers.size() != 1) return nullptr;
  const Node& n = g.node(value.consumers[0]);
  if (!n.domain.empty() || !n.implicit_inputs.empty() || n.outputs.size() != 1 ||
      n.outputs[0] == kNoValue)
    return nullptr;
  return &n;
}

// A constant float32 tensor of `n` values laid along the last axis: [n], or [1, ..., 1, n].
bool is_bias(const Graph& g, ValueId v, int64_t n) {
  const Tensor* t = g.constant(v);
  if (!t || t->dtype() != DType::kFloat32 || t->numel() != n || t->rank() < 1) return false;
  return t->dim(-1) == n;
}

// The fused activation of `act`, or nullopt where it is none recur fuses.
std::optional<std::string> activation_of(const Node& act) {
  if (act.op_type == "Relu") return std::string("Relu");
  if (act.op_type == "Swish") {
    const Attribute* alpha = act.attr("alpha");
    if (alpha && (alpha->type != AttrType::kFloat || alpha->f != 1.0f)) return std::nullopt;
    return std::string("Silu");
  }
  if (act.op_type != "Gelu") return std::nullopt;
  const Attribute* a = act.attr("approximate");
  if (!a || a->s == "none") return std::string("Gelu");
  if (a->s == "tanh") return std::string("GeluTanh");
  return std::nullopt;
}

std::optional<pattern::Replacement> match(const Graph& g, const Node& mm) {
  if (!mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2 ||
      mm.outputs.size() != 1 || !mm.implicit_inputs.empty())
    return std::nullopt;
  const Tensor* b = g.constant(mm.inputs[1]);
  if (!b || b->dtype() != DType::kFloat32 || b->rank() != 2) return std::nullopt;
  if (g.value(mm.inputs[0]).type.dtype != DType::kFloat32 || g.value(mm.inputs[0]).type.rank() < 2)
    return std::nullopt;
  const Node* add = sole_reader(g, mm.outputs[0]);
  if (!add || add->op_type != "Add" || add->inputs.size() != 2) return std::nullopt;
  const ValueId bias = add->inputs[0] == mm.outputs[0] ? add->inputs[1] : add->inputs[0];
  if (bias == mm.outputs[0] || !is_bias(g, bias, b->dim(1))) return std::nullopt;
  Node fused = mm;
  fused.domain = kMatMulBiasDomain;
  fused.op_type = kMatMulBiasOp;
  fused.opset = 1;
  fused.inputs.push_back(bias);
  fused.outputs = add->outputs;
  std::vector<int> replaced = {mm.index, add->index};
  std::string act;
  if (const Node* a = sole_reader(g, add->outputs[0])) {
    if (const auto f = activation_of(*a); f && a->inputs.size() == 1) {
      act = *f;
      fused.outputs = a->outputs;
      replaced.push_back(a->index);
    }
  }
  Attribute attr;
  attr.type = AttrType::kString;
  attr.s = act;
  fused.attributes[kMatMulBiasActivation] = std::move(attr);
  fused.notes.push_back("fused MatMul '" + mm.name + "', Add '" + add->name + "'" +
                        (act.empty() ? "" : " and " + act) + " into one node: the bias" +
                        (act.empty() ? " is" : " and the activation are") +
                        " applied as the product is written");
  return pattern::Replacement{std::move(fused), std::move(replaced)};
}

}  // namespace

Status fuse_matmul_bias(Graph& graph, const NodeFusionFilter& accept) {
  return pattern::replace_matches(graph, match, accept);
}

}  // namespace recur
