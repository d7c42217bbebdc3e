// Each operator's static type and shape rule, by domain, op and opset range. The rules are
// the operators' semantics, apart from any kernel: shape inference reads them whichever
// provider runs a node.
#pragma once

#include <climits>
#include <map>
#include <string>
#include <string_view>

#include "runtime/graph/shape_inference.h"

namespace recur {

struct OpRule {
  std::string domain;  // "" for the default ONNX domain
  std::string op;
  int since = 1;
  int until = INT_MAX;
  InferFn infer;
};

class OpRules {
 public:
  void add(OpRule rule);
  // The rule for `op` at `opset`, or an empty function when there is none.
  InferFn find(std::string_view domain, std::string_view op, int opset) const;
  size_t size() const { return rules_.size(); }

 private:
  std::multimap<std::string, OpRule, std::less<>> rules_;  // by "domain::op"
};

// Runs the rules over `graph` and, with outer-scope types passed down, over every subgraph.
Status infer_shapes(Graph& graph, const OpRules& rules);

}  // namespace recur
