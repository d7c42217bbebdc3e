// A compiled graph: the ordered steps, their kernels, and where every value lives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recur/assignment.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/execution_provider.h"
#include "runtime/provider/kernel.h"

namespace recur {

struct MemoryPlan;  // memory_plan.h

struct Step {
  enum class Kind { kKernel, kCopy };
  Kind kind = Kind::kKernel;
  // kKernel
  int node = -1;
  const Kernel* kernel = nullptr;
  int provider = -1;  // index into SubgraphPlan::providers
  std::vector<ValueId> inputs;
  std::vector<Device> input_devices;  // where each input must be (host inputs of a device kernel)
  // Per input: 1 when the kernel reads only its shape, so it is used wherever it lives.
  std::vector<uint8_t> shape_only;
  std::vector<ValueId> implicit_inputs;
  std::vector<ValueId> outputs;
  bool takes_strings = false;  // from the kernel's KernelDef
  bool takes_sequences = false;
  bool takes_maps = false;
  bool takes_optionals = false;
  // kCopy: slot src to slot dst on `device`
  ValueId src = kNoValue;
  ValueId dst = kNoValue;
  Device device;
  // Slots whose last reader is this step; freed after it runs.
  std::vector<ValueId> release;
  // Per input: 1 where the slot is in `release` and read by no other input of this step, so
  // the kernel may take it out of the frame (KernelContext::take_input).
  std::vector<uint8_t> last_read;
};

// A device copy the partitioner inserted, for --explain.
struct PlannedCopy {
  std::string value;
  Device from;
  Device to;
  std::string consumer;  // node name
  bool at_load = false;  // a constant copied once when the session was created
};

// The main graph and every subgraph compile to one of these. Slot i < graph->num_values() is
// value i on the device of its producer; higher slots are copies on other devices.
class SubgraphPlan {
 public:
  const Graph* graph = nullptr;
  size_t num_slots = 0;
  std::vector<Step> steps;
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<const ExecutionProvider*> providers;    // the session's, by index
  std::vector<std::pair<ValueId, Tensor>> constants;  // slot -> value, placed before a run
  std::vector<ValueId> input_slots;                   // graph inputs, in order
  std::vector<ValueId> output_slots;                  // graph outputs, in order
  std::vector<ValueId> outer_slots;  // outer references, in Graph::outer_refs() order
  // For a subgraph: outer_slots[i] is filled from the calling node's implicit input
  // outer_from_implicit[i].
  std::vector<size_t> outer_from_implicit;
  std::vector<NodeAssignment> assignment;  // in topological order
  std::vector<PlannedCopy> copies;
  size_t released_bytes = 0;  // constant weights freed after providers repacked them
  // Initializers that every kernel reading them repacked: the session drops its host copy.
  std::vector<ValueId> released_constants;
  // Where values of static shape live in a run's arena (memory_plan.h); set by build_plan.
  std::shared_ptr<const MemoryPlan> memory;
};

}  // namespace recur
