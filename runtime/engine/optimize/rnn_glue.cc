#include "runtime/engine/optimize/rnn_glue.h"

namespace recur::rnn_glue {

std::optional<std::vector<int64_t>> ints_of(const Graph& g, const Node& n, size_t i,
                                            const char* attr) {
  if (n.has_input(i)) {
    const Tensor* t = g.constant(n.inputs[i]);
    if (!t || !t->is_cpu()) return std::nullopt;
    std::vector<int64_t> v(static_cast<size_t>(t->numel()));
    for (int64_t k = 0; k < t->numel(); ++k) {
      if (t->dtype() == DType::kInt64) {
        v[static_cast<size_t>(k)] = t->data<int64_t>()[k];
      } else if (t->dtype() == DType::kInt32) {
        v[static_cast<size_t>(k)] = t->data<int32_t>()[k];
      } else {
        return std::nullopt;
      }
    }
    return v;
  }
  if (const Attribute* a = n.attr(attr); a && a->type == AttrType::kInts) return a->ints;
  return std::nullopt;
}

const Node* sole_reader(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& val = g.value(v);
  if (val.is_graph_output || val.consumers.size() != 1) return nullptr;
  const Node& c = g.node(val.consumers.front());
  if (!c.implicit_inputs.empty()) return nullptr;
  int reads = 0;
  for (ValueId i : c.inputs) reads += i == v;
  return reads == 1 ? &c : nullptr;
}

bool is_transpose(const Node& n, const std::vector<int64_t>& perm) {
  if (!n.domain.empty() || n.op_type != "Transpose" || n.outputs.size() != 1 ||
      n.outputs[0] == kNoValue || !n.has_input(0))
    return false;
  const Attribute* p = n.attr("perm");
  return p && p->type == AttrType::kInts && p->ints == perm;
}

std::optional<SeqGlue> seq_glue(const Graph& g, const Node& rnn) {
  if (!rnn.has_output(kRnnY)) return std::nullopt;
  const ValueId y = rnn.outputs[kRnnY];
  const Node* g1 = sole_reader(g, y);
  if (!g1 || !g1->domain.empty() || g1->outputs.size() != 1 || g1->outputs[0] == kNoValue ||
      !g1->has_input(0) || g1->inputs[0] != y)
    return std::nullopt;
  if (directions(rnn) == 1) {
    if (g1->op_type != "Squeeze") return std::nullopt;
    auto axes = ints_of(g, *g1, 1, "axes");
    if (!axes || axes->size() != 1 || ((*axes)[0] != 1 && (*axes)[0] != -3)) return std::nullopt;
    return SeqGlue{{g1->index}, g1->outputs[0]};
  }
  if (!is_transpose(*g1, {0, 2, 1, 3})) return std::nullopt;
  const Node* g2 = sole_reader(g, g1->outputs[0]);
  if (!g2 || !g2->domain.empty() || g2->op_type != "Reshape" || g2->outputs.size() != 1 ||
      g2->outputs[0] == kNoValue || g2->inputs.size() < 2 || g2->inputs[0] != g1->outputs[0])
    return std::nullopt;
  if (const Attribute* az = g2->attr("allowzero"); az && az->i != 0) return std::nullopt;
  auto shape = ints_of(g, *g2, 1, "shape");
  if (!shape || shape->size() != 3 || (*shape)[0] != 0 || (*shape)[1] != 0) return std::nullopt;
  if ((*shape)[2] != -1) {
    const Attribute* hs = rnn.attr("hidden_size");
    if (!hs || (*shape)[2] != 2 * hs->i) return std::nullopt;
  }
  return SeqGlue{{g1->index, g2->index}, g2->outputs[0]};
}

}  // namespace recur::rnn_glue
