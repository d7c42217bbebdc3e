// Graph rewrites applied after loading and before partitioning.
#pragma once

#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur {

// Turns Constant nodes into initializers (in subgraphs too), so that providers see weights
// produced by Constant nodes as constants they can repack at load time.
Status fold_constant_nodes(Graph& graph);

// Every pass, in order. Each leaves the graph finalized.
Status optimize_graph(Graph& graph);

}  // namespace recur
