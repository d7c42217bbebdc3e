// Runs a model's plan on the reference provider without a Session, so that a test can look at
// the memory a run leaves in the frame: a Session copies outputs that alias a feed or its arena
// before returning them, which hides whether a kernel copied or handed out a view.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recur/options.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/engine/session/plan.h"
#include "runtime/provider/execution_provider.h"

namespace recur::testing {

class ReferencePlanRun {
 public:
  // `model` is a serialized ModelProto; shapes are inferred as a Session would. `rewrite`,
  // where given, changes the graph after that (an optimizer pass under test), and shapes are
  // inferred again.
  static Result<std::unique_ptr<ReferencePlanRun>> load(
      const std::string& model, const std::function<Status(Graph&)>& rewrite = nullptr);
  const Graph& graph() const { return *model_.graph; }
  // The graph outputs of one run on `inputs` (in the graph's input order), as the frame holds
  // them.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) const;

 private:
  Model model_;
  std::unique_ptr<ExecutionProvider> provider_;
  SessionOptions options_;
  std::unique_ptr<SubgraphPlan> plan_;
};

}  // namespace recur::testing
