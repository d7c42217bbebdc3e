#include "runtime/graph/op_rules.h"

namespace recur {

namespace {
std::string rule_key(std::string_view domain, std::string_view op) {
  if (domain.empty() || domain == "ai.onnx") return std::string(op);
  return std::string(domain) + "::" + std::string(op);
}
}  // namespace

void OpRules::add(OpRule rule) {
  std::string key = rule_key(rule.domain, rule.op);
  rules_.emplace(std::move(key), std::move(rule));
}

InferFn OpRules::find(std::string_view domain, std::string_view op, int opset) const {
  auto [lo, hi] = rules_.equal_range(rule_key(domain, op));
  for (auto it = lo; it != hi; ++it) {
    if (opset >= it->second.since && opset <= it->second.until) return it->second.infer;
  }
  return {};
}

Status infer_shapes(Graph& g, const OpRules& rules) {
  RECUR_RETURN_IF_ERROR(infer_shapes(
      g, [&rules](const Node& n) { return rules.find(n.domain, n.op_type, n.opset); }));
  for (const Node& n : g.nodes()) {
    for (const auto& [name, a] : n.attributes) {
      std::vector<Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (const auto& sg : a.graphs) subs.push_back(sg.get());
      for (Graph* sub : subs) {
        for (ValueId r : sub->outer_refs()) {
          const ValueId here = g.find(sub->value(r).name);
          if (here != kNoValue) sub->mutable_value(r).type = g.value(here).type;
        }
        RECUR_RETURN_IF_ERROR(infer_shapes(*sub, rules));
      }
    }
  }
  return ok_status();
}

}  // namespace recur
