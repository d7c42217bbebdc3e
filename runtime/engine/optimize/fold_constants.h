// Load-time evaluation of everything that does not depend on the run's inputs, in the main graph
// and in every If/Loop/Scan subgraph, so that kernels inside control flow see their weights as
// constants (and repack them once, at load) exactly as kernels of the main graph do.
#pragma once

#include <string>
#include <vector>

#include "recur/options.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/execution_provider.h"

namespace recur {

// In `graph`, then in each subgraph, top down:
//  - shape computations over static shapes are folded (fold_shape_subgraphs);
//  - a node whose inputs are all constants runs once with `host`'s kernels and its outputs
//    become constants, unless it is random, holds a subgraph, writes a graph output, or its
//    outputs are much larger than its inputs (ConstantOfShape, Expand, Tile of a small input);
//  - a constant of an enclosing graph that a subgraph reads becomes a constant of the subgraph
//    (sharing the memory), and the owner's implicit input for it goes.
// Constants that nothing reads any more are dropped. Needs the inferred types; leaves every
// graph finalized. Appends the names of the folded nodes to `folded`.
// The outer references of `sub` still read from the enclosing graph: those fold_constants did
// not turn into constants of `sub`.
std::vector<ValueId> outer_refs_read(const Graph& sub);

Status fold_constants(Graph& graph, const ExecutionProvider& host, const SessionOptions& options,
                      std::vector<std::string>* folded);

}  // namespace recur
