// How a session runs its plan. A PlainRunner runs the steps; a RecordedRunner
// (SessionOptions::cuda_graphs) records the device work of each input signature once and
// replays it. The session chooses one at load and keeps only its lifetime and API.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/engine/session/memory_plan.h"
#include "runtime/engine/session/plan.h"
#include "runtime/provider/execution_provider.h"

namespace recur {

struct RunSetup {
  const SubgraphPlan* plan = nullptr;
  // Indexed like Step::provider: the listed providers, then the host provider.
  std::vector<const ExecutionProvider*> providers;
  int threads = 0;
  int64_t max_loop_iterations = 0;
  size_t memory_limit = SIZE_MAX;  // host bytes per run (SessionOptions::memory_limit)
};

class Runner {
 public:
  virtual ~Runner() = default;
  // Runs the plan over `frame` (plan->num_slots tensors, inputs placed), ending early as
  // `control` says. With `arena` (leased by this run alone), host outputs take its memory and
  // subgraphs run in its frames. `needed`, when not empty, says which steps to run
  // (Executor::execute); a runner may run more. Thread-safe.
  virtual Status run(std::vector<Tensor>& frame, const RunControl& control,
                     RunArena* arena = nullptr, std::span<const uint8_t> needed = {}) const = 0;
  // Lines for --explain about how runs go; empty when there is nothing to say.
  virtual std::string explain() const { return {}; }
};

// A RecordedRunner when `cuda_graphs` is asked for and the plan can be recorded, else a
// PlainRunner whose explain() says why runs are not recorded.
std::unique_ptr<Runner> make_runner(RunSetup setup, bool cuda_graphs);

}  // namespace recur
