#include "runtime/engine/session/partitioner.h"

#include "runtime/engine/session/memory_plan.h"
#include "runtime/engine/session/plan_builder.h"

namespace recur {

Result<std::unique_ptr<SubgraphPlan>> build_plan(
    const Graph& graph, const std::vector<const ExecutionProvider*>& providers,
    const PartitionOptions& options) {
  PlanBuilder b(graph, providers, options);
  RECUR_RETURN_IF_ERROR(b.assign());
  RECUR_RETURN_IF_ERROR(b.compile());
  RECUR_RETURN_IF_ERROR(b.place());
  b.liveness();
  std::unique_ptr<SubgraphPlan> plan = b.finish();
  if (!options.plan_only) plan->memory = std::make_shared<const MemoryPlan>(plan_memory(*plan));
  return plan;
}

}  // namespace recur
