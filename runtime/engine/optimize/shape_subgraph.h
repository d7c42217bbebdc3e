// Shape computations: the Shape -> Gather/Slice/Concat/Unsqueeze -> ... chains that exporters
// build to size initial states and reshapes. They belong on the host: folded at load where the
// shapes are static, and otherwise run on the host every run, reading only the shapes of device
// tensors (KernelDef::shape_only_inputs), so they never cost a device round trip.
#pragma once

#include <string>
#include <vector>

#include "recur/options.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/execution_provider.h"

namespace recur {

// Per node (indexed like graph.nodes()): 1 for a shape computation. That is Shape and Size, and
// the integer arithmetic over their results (Gather, Slice, Concat, Unsqueeze, Squeeze, Cast,
// Reshape, Add, Mul, ReduceProd, Equal, Where, ...) whose every input is such a result or a small
// constant, and whose outputs are integers or booleans.
std::vector<char> find_host_shape_nodes(const Graph& graph);

// Evaluates at load, with `host`'s kernels, the shape computations whose inputs are known:
// Shape and Size of values with static shapes, and shape computations (as above) over
// constants. Their outputs become constants and the nodes are removed. Needs the inferred types
// (it reads static shapes). Appends the names of the folded nodes to `folded`.
Status fold_shape_subgraphs(Graph& graph, const ExecutionProvider& host,
                            const SessionOptions& options, std::vector<std::string>* folded);

}  // namespace recur
