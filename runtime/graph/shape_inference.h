// Static type and shape inference. Each operator's rule lives beside its reference kernel;
// the pass walks the graph in topological order and fills in what the rules can tell.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur {

class InferContext {
 public:
  InferContext(const Node& node, Graph& graph) : node_(node), graph_(graph) {}

  const Node& node() const { return node_; }
  int opset() const { return node_.opset; }
  size_t num_inputs() const { return node_.inputs.size(); }
  bool has_input(size_t i) const { return node_.has_input(i); }
  const TypeInfo& input_type(size_t i) const;
  // The value of input i when it is known before running: a constant initializer, or a value
  // folded earlier (e.g. a Shape of a static shape). nullptr otherwise.
  const Tensor* input_value(size_t i) const;
  size_t num_outputs() const { return node_.outputs.size(); }
  // Records output i's type. Dimensions already known from the model are kept where the
  // rule leaves them unknown.
  void set_output(size_t i, TypeInfo type);
  Status error(const std::string& message) const {
    return invalid_model(node_.describe() + ": " + message);
  }

 private:
  const Node& node_;
  Graph& graph_;
};

using InferFn = std::function<Status(InferContext&)>;

// Runs the rules over `graph` (not its subgraphs). `rule_for` returns the rule for a node, or
// an empty function.
Status infer_shapes(Graph& graph, const std::function<InferFn(const Node&)>& rule_for);

// Helpers for rules.
// numpy broadcasting of two declared shapes; nullopt when a rank is unknown. Fails on two
// fixed dimensions that differ and are not 1.
Result<std::optional<std::vector<Dim>>> broadcast_dims(const std::optional<std::vector<Dim>>& a,
                                                       const std::optional<std::vector<Dim>>& b);

}  // namespace recur
