#include "runtime/engine/optimize/evaluate.h"

#include <exception>
#include <memory>

#include "runtime/core/memory_budget.h"

namespace recur {

Result<std::vector<Tensor>> evaluate_at_load(const Graph& graph, const Node& n,
                                             std::vector<Tensor> inputs,
                                             const ExecutionProvider& host,
                                             const SessionOptions& options, size_t max_bytes) {
  if (!host.claim(n, graph).yes) return not_implemented(n.describe() + ": not claimed");
  const CompileContext::SubgraphCompiler no_subgraphs =
      [](const Graph&, const Node& owner) -> Result<std::shared_ptr<const SubgraphPlan>> {
    return internal_error(owner.describe() + ": no subgraphs while folding");
  };
  CompileContext cctx(n, graph, host, options, no_subgraphs);
  Result<std::unique_ptr<Kernel>> kernel = host.compile(cctx);
  if (!kernel.ok()) return kernel.status();
  if (!kernel.value()) return internal_error(n.describe() + ": no kernel");
  // The frame holds the inputs, then the outputs.
  std::vector<Tensor> frame = std::move(inputs);
  frame.resize(n.inputs.size() + n.outputs.size());
  std::vector<ValueId> in_ids, out_ids;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    in_ids.push_back(n.inputs[i] == kNoValue ? kNoValue : static_cast<ValueId>(i));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    out_ids.push_back(n.outputs[i] == kNoValue ? kNoValue
                                               : static_cast<ValueId>(n.inputs.size() + i));
  KernelContext::Env env;
  env.max_loop_iterations = options.max_loop_iterations();
  KernelContext kctx(n, frame, in_ids, {}, out_ids, Device::cpu(), env);
  const auto budget = std::make_shared<MemoryBudget>(max_bytes);
  MemoryBudgetScope scope(budget.get());
  Status st;
  try {
    st = kernel.value()->run(kctx);
  } catch (const std::exception& e) {
    st = internal_error(std::string("exception: ") + e.what());
  }
  if (!st.ok()) return st;
  return std::vector<Tensor>(frame.begin() + static_cast<std::ptrdiff_t>(n.inputs.size()),
                             frame.end());
}

}  // namespace recur
