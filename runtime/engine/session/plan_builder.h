// build_plan as passes. Each pass reads what the earlier ones decided and adds its own part
// of the SubgraphPlan, so each can be tested alone with a fake provider:
//   assign    each node to the first provider that claims it (declines kept for --explain)
//   compile   each node's kernel; the inputs it repacked and released; its notes
//   place     home devices, slots, device copies, load-time constants, released weights
//   liveness  the step after which each slot is freed
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/engine/session/partitioner.h"
#include "runtime/engine/session/plan.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/execution_provider.h"

namespace recur {

class PlanBuilder {
 public:
  PlanBuilder(const Graph& graph, std::vector<const ExecutionProvider*> providers,
              const PartitionOptions& options);

  Status assign();
  Status compile();
  Status place();
  void liveness();
  std::unique_ptr<SubgraphPlan> finish();

  // What the passes decided, for tests: the index into plan().providers that runs node
  // `idx` (-1 before assign), and the input positions its kernel released.
  int provider_of(int idx) const { return node_provider_[static_cast<size_t>(idx)]; }
  std::set<size_t> released_inputs(int idx) const;
  const SubgraphPlan& plan() const { return *plan_; }

 private:
  // Assigns one node; false with the message when no provider claims it.
  bool assign_node(int idx, const std::vector<char>& host_node, std::string* unclaimed);
  CompileContext::SubgraphCompiler subgraph_compiler() const;
  // Plan-only: plans the node's subgraphs only to say where their nodes would run.
  Status plan_subgraphs(int idx);
  void attach_subgraphs();
  // The slot that holds value v on `dev` for `consumer`: v itself where it lives, else a
  // copy made once (a copy step, or a constant uploaded at load).
  Result<ValueId> slot_on(ValueId v, Device dev, const Node& consumer);
  Result<Step> kernel_step(int idx);
  void keep_host_constants();
  // Frees constant input i of node idx at once where idx is its only reader (release_input_now);
  // with check_only, frees nothing and says whether that frees its memory.
  bool drop_input_now(int idx, size_t i, bool check_only);

  const Graph& graph_;
  const std::vector<const ExecutionProvider*> listed_;  // the session's, in priority order
  const PartitionOptions& options_;
  std::unique_ptr<SubgraphPlan> plan_;
  std::vector<int> node_provider_;                     // node -> index into plan_->providers
  std::vector<const Kernel*> node_kernel_;             // node -> compiled kernel
  std::map<int, std::set<size_t>> released_;           // node -> input positions released
  std::vector<std::pair<ValueId, size_t>> dropped_;    // freed while compiling: value, bytes
  std::vector<Device> home_;                           // value -> device of its producer
  std::map<std::pair<ValueId, int>, ValueId> copies_;  // (value, device key) -> slot
  // Assignments of the subgraphs compiled for each node (by node index), for --explain.
  mutable std::map<int, std::vector<NodeAssignment::Subgraph>> subgraphs_;
};

// Which steps a run that asks for some of the graph's outputs must run: their producers, and
// theirs in turn. Steps that draw random values, themselves or in a subgraph, always run: a
// run's n-th draw is then the same node whichever outputs it asks for, so a fixed seed gives
// the same values. Built at load in time linear in the plan; each run walks only what its
// outputs reach, so a graph with many outputs costs no quadratic table (40,000 chained
// outputs took 22 s and 3.4 GB to load with one list of steps per output).
class OutputCones {
 public:
  explicit OutputCones(const SubgraphPlan& plan);
  // Sets mask[k] to 1 for every step the graph outputs `outputs` (indices into
  // plan.output_slots) need, and to 0 for the others. `todo` is scratch, kept by the caller
  // so that a run allocates nothing once both have grown.
  void mark(const SubgraphPlan& plan, std::span<const size_t> outputs, std::vector<uint8_t>& mask,
            std::vector<uint32_t>& todo) const;

 private:
  std::vector<int32_t> producer_;  // slot -> the step that writes it, or -1
  std::vector<uint32_t> random_steps_;
};

}  // namespace recur
