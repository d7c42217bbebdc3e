// Assigns each node to the first provider that claims it, compiles the kernels, and inserts
// copies where a value crosses devices.
#pragma once

#include <memory>
#include <vector>

#include "recur/options.h"
#include "runtime/core/status.h"
#include "runtime/engine/session/plan.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/execution_provider.h"

namespace recur {

struct PartitionOptions {
  const SessionOptions* session = nullptr;
  bool plan_only = false;  // claim as if every device were present; compile nothing
  // Runs the shape computations (runtime/engine/optimize/shape_subgraph.h) when no CPU provider in
  // the list claims them, e.g. in a session listing only GPU providers. Appended to the plan's
  // providers when used.
  const ExecutionProvider* host_provider = nullptr;
  // The graph whose constants a kernel may free while it compiles
  // (CompileContext::release_input_now): the session's own main graph, which nothing else
  // reads. Subgraphs, whose constants may be their enclosing graph's, free theirs with the plan.
  Graph* owned_graph = nullptr;
};

// Plans `graph` (the main graph or a subgraph); subgraphs of its nodes are planned when
// their kernels compile them.
Result<std::unique_ptr<SubgraphPlan>> build_plan(
    const Graph& graph, const std::vector<const ExecutionProvider*>& providers,
    const PartitionOptions& options);

}  // namespace recur
