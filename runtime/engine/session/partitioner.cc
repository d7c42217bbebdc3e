#include "runtime/engine/session/partitioner.h"

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
  return b.finish();
}

}  // namespace recur
