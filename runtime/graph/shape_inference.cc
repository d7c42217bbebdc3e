#include "runtime/graph/shape_inference.h"

#include <algorithm>

namespace recur {

namespace {
const TypeInfo kUnknownType;
}

const TypeInfo& InferContext::input_type(size_t i) const {
  if (!node_.has_input(i)) return kUnknownType;
  return graph_.value(node_.inputs[i]).type;
}

const Tensor* InferContext::input_value(size_t i) const {
  if (!node_.has_input(i)) return nullptr;
  return graph_.constant(node_.inputs[i]);
}

void InferContext::set_output(size_t i, TypeInfo type) {
  if (!node_.has_output(i)) return;
  Value& v = graph_.mutable_value(node_.outputs[i]);
  if (type.dtype != DType::kUndefined) v.type.dtype = type.dtype;
  if (type.element_dtype != DType::kUndefined) v.type.element_dtype = type.element_dtype;
  if (type.map_key_dtype != DType::kUndefined) v.type.map_key_dtype = type.map_key_dtype;
  if (type.map_value_dtype != DType::kUndefined) v.type.map_value_dtype = type.map_value_dtype;
  if (type.optional) v.type.optional = true;
  if (!type.shape) return;
  if (v.type.shape && v.type.shape->size() == type.shape->size()) {
    for (size_t d = 0; d < type.shape->size(); ++d) {
      Dim& have = (*v.type.shape)[d];
      const Dim& got = (*type.shape)[d];
      if (got.is_fixed()) {
        have.value = got.value;
      } else if (!have.is_fixed() && have.symbol.empty()) {
        have.symbol = got.symbol;
      }
    }
  } else {
    v.type.shape = std::move(type.shape);
  }
}

Status infer_shapes(Graph& graph, const std::function<InferFn(const Node&)>& rule_for) {
  for (int idx : graph.topo_order()) {
    const Node& node = graph.node(idx);
    InferFn rule = rule_for(node);
    if (!rule) continue;
    InferContext ctx(node, graph);
    RECUR_RETURN_IF_ERROR(rule(ctx));
  }
  return ok_status();
}

Result<std::optional<std::vector<Dim>>> broadcast_dims(const std::optional<std::vector<Dim>>& a,
                                                       const std::optional<std::vector<Dim>>& b) {
  if (!a || !b) return std::optional<std::vector<Dim>>();
  const size_t rank = std::max(a->size(), b->size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim one{1, {}};
    const Dim& x = i < rank - a->size() ? one : (*a)[i - (rank - a->size())];
    const Dim& y = i < rank - b->size() ? one : (*b)[i - (rank - b->size())];
    if (x.is_fixed() && y.is_fixed()) {
      if (x.value != y.value && x.value != 1 && y.value != 1) {
        return invalid_argument("shapes cannot broadcast: dimension " + std::to_string(x.value) +
                                " against " + std::to_string(y.value));
      }
      out[i] = Dim{x.value == 1 ? y.value : x.value, {}};
    } else if (x.is_fixed() && x.value != 1) {
      out[i] = x;
    } else if (y.is_fixed() && y.value != 1) {
      out[i] = y;
    } else if (x.is_fixed()) {  // x is 1
      out[i] = y;
    } else if (y.is_fixed()) {  // y is 1
      out[i] = x;
    } else {
      out[i] = x.symbol == y.symbol ? x : Dim{};
    }
  }
  return std::optional<std::vector<Dim>>(std::move(out));
}

}  // namespace recur
