// Running one node at load time, for the folding passes.
#pragma once

#include <vector>

#include "recur/options.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/execution_provider.h"

namespace recur {

// Runs node `n` of `graph` once with `host`'s kernel over `inputs` (indexed like n.inputs; an
// undefined tensor for an omitted one) and returns its outputs. Fails where `host` declines the
// node or its kernel fails to compile or run; the folding passes then leave the node for run
// time, which reports the problem with the run's inputs in view. The tensors the kernel
// allocates count against `max_bytes`: a constant Expand or Tile to gigabytes fails here (a
// fuzzer find) instead of allocating them, and meets the run's memory limit later.
Result<std::vector<Tensor>> evaluate_at_load(const Graph& graph, const Node& n,
                                             std::vector<Tensor> inputs,
                                             const ExecutionProvider& host,
                                             const SessionOptions& options, size_t max_bytes);

}  // namespace recur
