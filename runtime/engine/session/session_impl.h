// The state behind a Session, shared by the files that implement it (session.cc: creation
// and runs; explain.cc: the assignment table).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "recur/session.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/engine/session/memory_plan.h"
#include "runtime/engine/session/plan.h"
#include "runtime/engine/session/plan_builder.h"
#include "runtime/engine/session/profiler.h"
#include "runtime/engine/session/runner.h"
#include "runtime/provider/execution_provider.h"
#include "runtime/provider/run_random.h"

namespace recur {

// Called with true just before a session's runner runs and with false just after (inputs
// placed, outputs not yet taken), on the calling thread; null unless a test counts what the
// run itself does (tests/alloc).
extern void (*g_run_observer)(bool begin);

struct Session::Impl {
  Model model;
  SessionOptions options;
  std::vector<std::unique_ptr<ExecutionProvider>> owned_providers;
  std::vector<const ExecutionProvider*> providers;
  std::vector<std::string> provider_names;
  // Runs the shape computations no listed CPU provider takes; index providers.size() in plans.
  std::unique_ptr<ExecutionProvider> host;
  std::unique_ptr<SubgraphPlan> plan;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  // Name -> position in inputs and outputs: a run looks each feed and wanted output up.
  std::unordered_map<std::string, size_t> input_index;
  std::unordered_map<std::string, size_t> output_index;
  std::vector<NodeAssignment> assignment;
  std::vector<std::string> folded;  // shape computations evaluated at load
  std::unique_ptr<Runner> runner;   // plain, or recording CUDA graphs
  // The steps each output needs: a run that asks for some outputs runs only what they need.
  std::optional<OutputCones> output_cones;
  // The random operators' seeds (SessionOptions::random_seed): a fixed seed gives every run
  // the same one; otherwise each run mixes the session's base seed with its own number.
  uint64_t random_base = 0;
  bool random_fixed = false;
  mutable std::atomic<uint64_t> random_runs{0};
  uint64_t next_run_seed() const {
    return random_fixed ? random_base
                        : mix64(random_base ^ random_runs.fetch_add(1, std::memory_order_relaxed));
  }
  // Memory reused between runs, one arena per run in progress; after the plans, so that it
  // goes first. Off when RECUR_ARENA=0 is set at load (to compare).
  bool use_arenas = true;
  mutable ArenaPool arenas;
  // Last, so that it is destroyed (and writes its file) while the plans it points into live.
  std::unique_ptr<Profiler> profiler;  // null unless SessionOptions::profile
};

}  // namespace recur
