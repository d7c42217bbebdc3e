#include "runtime/engine/session/runner.h"

#include <map>
#include <mutex>
#include <set>

#include "runtime/core/device_memory.h"
#include "runtime/core/memory_budget.h"
#include "runtime/engine/session/executor.h"

namespace recur {

namespace {

struct RecordHooks {
  enum class Mode { kMeasure, kRecord } mode = Mode::kMeasure;
  RunRecorder* recorder = nullptr;
  int provider = -1;
  size_t arena_bytes = 0;
  size_t measured = 0;
};

// One run of the plan over `frame`, optionally measured or recorded.
// Every host tensor the run allocates counts against a budget of its own, so that concurrent
// runs do not share one. With an arena, the budget, the environments and the output memory
// are the arena's, reused from run to run.
Status run_plan(const RunSetup& setup, std::vector<Tensor>& frame, const RunControl& control,
                RecordHooks* hooks, RunArena* arena = nullptr,
                std::span<const uint8_t> needed = {}) {
  std::shared_ptr<MemoryBudget> own_budget;
  MemoryBudget* budget = nullptr;
  if (arena) {
    budget = arena->begin_run(setup.memory_limit);
  } else {
    own_budget = std::make_shared<MemoryBudget>(setup.memory_limit);
    budget = own_budget.get();
  }
  MemoryBudgetScope budget_scope(budget);
  const auto& providers = setup.providers;
  std::vector<std::unique_ptr<ProviderRunState>> own_states;
  std::vector<KernelContext::Env> own_envs;
  auto& states = arena ? arena->states : own_states;
  auto& envs = arena ? arena->envs : own_envs;
  states.resize(providers.size());
  envs.resize(providers.size());
  for (size_t p = 0; p < providers.size(); ++p) {
    states[p] = providers[p]->begin_run();
    envs[p].threads = setup.threads;
    envs[p].max_loop_iterations = setup.max_loop_iterations;
    envs[p].provider_state = states[p].get();
    envs[p].control = control.active() ? &control : nullptr;
    envs[p].random = control.random;
  }
  Executor executor(envs, arena);
  for (auto& env : envs) env.subgraphs = &executor;
  FrameArena* main = arena ? arena->enter(*setup.plan) : nullptr;
  Status st;
  ProviderRunState* rec_state =
      hooks ? states[static_cast<size_t>(hooks->provider)].get() : nullptr;
  if (hooks && hooks->mode == RecordHooks::Mode::kMeasure) hooks->recorder->start_measuring();
  if (hooks && hooks->mode == RecordHooks::Mode::kRecord) {
    st = hooks->recorder->start_recording(rec_state, hooks->arena_bytes);
  }
  if (st.ok()) st = executor.execute(*setup.plan, frame, main, needed);
  if (hooks && hooks->mode == RecordHooks::Mode::kMeasure) {
    hooks->measured = hooks->recorder->stop_measuring();
  }
  if (hooks && hooks->mode == RecordHooks::Mode::kRecord) {
    Status stop = hooks->recorder->stop_recording(rec_state);
    if (st.ok()) st = stop;
  }
  for (size_t p = 0; p < providers.size(); ++p) {
    Status end = providers[p]->end_run(states[p].get());
    if (st.ok()) st = end;
    states[p].reset();
  }
  if (main) main->in_use = false;  // the caller clears the frame after taking the outputs
  if (arena) arena->end_run();
  return st;
}

class PlainRunner final : public Runner {
 public:
  PlainRunner(RunSetup setup, std::string note)
      : setup_(std::move(setup)), note_(std::move(note)) {}
  Status run(std::vector<Tensor>& frame, const RunControl& control, RunArena* arena,
             std::span<const uint8_t> needed) const override {
    return run_plan(setup_, frame, control, nullptr, arena, needed);
  }
  std::string explain() const override { return note_; }

 private:
  RunSetup setup_;
  std::string note_;
};

bool has_subgraphs(const Node& n) {
  for (const auto& [k, a] : n.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

// Why a step keeps a run from being recorded, or "" when it does not. A recording replays
// device work without the host, so nothing between device steps may need run-time data on
// the host.
std::string blocks_recording(const SubgraphPlan& plan, const Step& s,
                             const std::vector<const ExecutionProvider*>& providers,
                             const std::set<ValueId>& graph_inputs, int* device_provider) {
  const Graph& g = *plan.graph;
  auto name_of = [&](ValueId slot) {
    return static_cast<size_t>(slot) < g.num_values() ? "'" + g.value(slot).name + "'"
                                                      : std::string("a copy");
  };
  if (s.kind == Step::Kind::kCopy) {
    if (!graph_inputs.count(s.src) || s.device.is_cpu()) {
      return "the run copies " + name_of(s.src) + " to " + s.device.to_string() + " between steps";
    }
    return {};
  }
  const ExecutionProvider* p = providers[static_cast<size_t>(s.provider)];
  const Node& node = g.node(s.node);
  if (!p->device().is_cpu()) {
    if (*device_provider >= 0 &&
        providers[static_cast<size_t>(*device_provider)]->device() != p->device()) {
      return "the plan uses two devices";
    }
    if (*device_provider < 0) *device_provider = s.provider;
  } else if (has_subgraphs(node)) {
    return node.describe() + " runs subgraphs on the host";
  } else if (node.draws_random()) {
    return node.describe() +
           " draws random values on the host: a recording would keep one "
           "run's values";
  }
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const ValueId v = s.inputs[i];
    if (v == kNoValue || (i < s.shape_only.size() && s.shape_only[i])) continue;
    const bool on_host =
        p->device().is_cpu() || (i < s.input_devices.size() && s.input_devices[i].is_cpu());
    if (on_host && graph_inputs.count(v)) {
      return node.describe() + " reads the values of graph input " + name_of(v) +
             " on the host: a recording would keep one run's values";
    }
  }
  return {};
}

// The provider that records the plan's runs, or -1 with `why` set.
int choose_recorder(const RunSetup& setup, std::string* why) {
  const SubgraphPlan& plan = *setup.plan;
  const auto& providers = setup.providers;
  bool any_device = false;
  for (const Step& s : plan.steps) {
    any_device |= s.kind == Step::Kind::kKernel &&
                  !providers[static_cast<size_t>(s.provider)]->device().is_cpu();
  }
  if (!any_device) {
    *why = "no node runs on a GPU";
    return -1;
  }
  const std::set<ValueId> graph_inputs(plan.input_slots.begin(), plan.input_slots.end());
  int device_provider = -1;
  for (const Step& s : plan.steps) {
    *why = blocks_recording(plan, s, providers, graph_inputs, &device_provider);
    if (!why->empty()) return -1;
  }
  const Device dev = providers[static_cast<size_t>(device_provider)]->device();
  for (size_t p = 0; p < providers.size(); ++p) {
    if (providers[p]->device() == dev && providers[p]->make_recorder()) return static_cast<int>(p);
  }
  *why = "no provider on " + dev.to_string() + " can record runs";
  return -1;
}

// A device copy of `t` that owns its memory.
Result<Tensor> device_clone(const Tensor& t) {
  Tensor c;
  try {
    c = Tensor::empty(t.dtype(), t.shape(), t.device());
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
  RECUR_RETURN_IF_ERROR(copy_tensor(t, c));
  return c;
}

// One recorded run for one input signature.
struct GraphEntry {
  std::mutex mu;
  bool measured = false;
  bool recorded = false;
  bool failed = false;
  std::string why;
  size_t arena_bytes = 0;
  std::unique_ptr<RunRecorder> recorder;
  std::vector<Tensor> inputs;  // device buffers the recording reads, fed before each replay
  std::vector<Tensor> frame;   // the recorded run's frame: outputs at fixed addresses
};

// The first run of a signature measures the device memory a run allocates, the second records
// with an arena of that size, and later runs replay. Runs of one signature are serialized.
class RecordedRunner final : public Runner {
 public:
  RecordedRunner(RunSetup setup, int recorder) : setup_(std::move(setup)), recorder_(recorder) {}

  // Recording keeps its own frames: it takes nothing from `arena`. A replay runs every step
  // (one launch of the whole recording), so `needed` is not used.
  Status run(std::vector<Tensor>& frame, const RunControl& control, RunArena* arena,
             std::span<const uint8_t> needed) const override;
  std::string explain() const override;

 private:
  std::shared_ptr<GraphEntry> entry_for(const std::vector<Tensor>& frame) const;
  Status measure(GraphEntry& e, std::vector<Tensor>& frame, const RunControl& control) const;
  Status record(GraphEntry& e, std::vector<Tensor>& frame, const RunControl& control) const;
  Status replay(GraphEntry& e, std::vector<Tensor>& frame) const;

  RunSetup setup_;
  int recorder_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<GraphEntry>> entries_;  // by input signature
};

std::shared_ptr<GraphEntry> RecordedRunner::entry_for(const std::vector<Tensor>& frame) const {
  std::string key;
  for (ValueId slot : setup_.plan->input_slots) {
    const Tensor& t = frame[static_cast<size_t>(slot)];
    key += std::string(dtype_name(t.dtype())) + shape_to_string(t.shape()) + "@" +
           t.device().to_string() + ";";
  }
  std::lock_guard lock(mu_);
  auto& e = entries_[key];
  if (!e) e = std::make_shared<GraphEntry>();
  return e;
}

Status RecordedRunner::measure(GraphEntry& e, std::vector<Tensor>& frame,
                               const RunControl& control) const {
  e.recorder = setup_.providers[static_cast<size_t>(recorder_)]->make_recorder();
  if (!e.recorder) {
    e.failed = true;
    return run_plan(setup_, frame, control, nullptr);
  }
  RecordHooks h;
  h.mode = RecordHooks::Mode::kMeasure;
  h.recorder = e.recorder.get();
  h.provider = recorder_;
  RECUR_RETURN_IF_ERROR(run_plan(setup_, frame, control, &h));
  e.arena_bytes = h.measured;
  e.measured = true;
  return ok_status();
}

// The recording reads its inputs from device buffers it keeps; each replay refills them.
Status RecordedRunner::record(GraphEntry& e, std::vector<Tensor>& frame,
                              const RunControl& control) const {
  const Device dev = setup_.providers[static_cast<size_t>(recorder_)]->device();
  std::vector<Tensor> rframe = new_frame(*setup_.plan);
  for (ValueId slot : setup_.plan->input_slots) {
    const Tensor& t = frame[static_cast<size_t>(slot)];
    if (!t.defined()) continue;
    Tensor buf;
    try {
      buf = Tensor::empty(t.dtype(), t.shape(), dev);
    } catch (const Error& err) {
      return Status(err.code(), err.what());
    }
    RECUR_RETURN_IF_ERROR(copy_tensor(t, buf));
    e.inputs.push_back(buf);
    rframe[static_cast<size_t>(slot)] = buf;
  }
  RecordHooks h;
  h.mode = RecordHooks::Mode::kRecord;
  h.recorder = e.recorder.get();
  h.provider = recorder_;
  // Slack for allocations that differ between runs (a cuDNN workspace sized per call).
  h.arena_bytes = e.arena_bytes + e.arena_bytes / 8 + (size_t{4} << 20);
  std::shared_ptr<void> bound = e.recorder->bind_thread();
  Status st = run_plan(setup_, rframe, control, &h);
  bound.reset();
  if (st.code() == ErrorCode::kCancelled) {
    e.inputs.clear();
    e.recorder.reset();
    e.measured = false;  // the next run measures again and records after
    return st;
  }
  if (!st.ok()) {
    e.failed = true;
    e.why = st.message();
    e.inputs.clear();
    e.recorder.reset();
    return run_plan(setup_, frame, control, nullptr);
  }
  e.frame = std::move(rframe);
  e.recorded = true;
  return ok_status();
}

Status RecordedRunner::replay(GraphEntry& e, std::vector<Tensor>& frame) const {
  const auto& providers = setup_.providers;
  std::vector<std::unique_ptr<ProviderRunState>> states;
  for (const ExecutionProvider* p : providers) states.push_back(p->begin_run());
  Status st = e.recorder->replay(states[static_cast<size_t>(recorder_)].get());
  // The recording's outputs are overwritten by the next replay: hand out copies. They are made
  // while the run's states live, so on the run's stream, which end_run then waits for: the
  // copies are complete when the run returns and before the next replay may begin.
  for (ValueId slot : setup_.plan->output_slots) {
    const Tensor& t = e.frame[static_cast<size_t>(slot)];
    if (!st.ok() || !t.defined()) continue;
    if (t.is_cpu()) {
      frame[static_cast<size_t>(slot)] = t;
      continue;
    }
    Result<Tensor> copy = device_clone(t);
    if (copy.ok()) {
      frame[static_cast<size_t>(slot)] = std::move(copy).value();
    } else {
      st = copy.status();
    }
  }
  for (size_t p = 0; p < providers.size(); ++p) {
    Status end = providers[p]->end_run(states[p].get());
    if (st.ok()) st = end;
  }
  return st;
}

// A replay runs the whole recording at once: it can only be cancelled before it starts.
Status RecordedRunner::run(std::vector<Tensor>& frame, const RunControl& control,
                           RunArena* /*arena*/, std::span<const uint8_t> /*needed*/) const {
  std::shared_ptr<GraphEntry> entry = entry_for(frame);
  std::lock_guard lock(entry->mu);
  if (entry->failed) return run_plan(setup_, frame, control, nullptr);
  if (!entry->measured) return measure(*entry, frame, control);
  if (!entry->recorded) {
    RECUR_RETURN_IF_ERROR(record(*entry, frame, control));
    if (entry->failed) return ok_status();  // record() ran the plan normally instead
  } else {
    RECUR_RETURN_IF_ERROR(control.check());
    size_t k = 0;
    for (ValueId slot : setup_.plan->input_slots) {
      const Tensor& t = frame[static_cast<size_t>(slot)];
      if (!t.defined()) continue;
      RECUR_RETURN_IF_ERROR(copy_tensor(t, entry->inputs[k++]));
    }
  }
  return replay(*entry, frame);
}

std::string RecordedRunner::explain() const {
  std::string s =
      "\ncuda graphs: each input signature is recorded on its second run and replayed after\n";
  std::lock_guard lock(mu_);
  for (const auto& [key, e] : entries_) {
    if (e->failed && !e->why.empty()) s += "  " + key + " not recorded: " + e->why + "\n";
  }
  return s;
}

}  // namespace

std::unique_ptr<Runner> make_runner(RunSetup setup, bool cuda_graphs) {
  if (!cuda_graphs) return std::make_unique<PlainRunner>(std::move(setup), "");
  std::string why;
  const int recorder = choose_recorder(setup, &why);
  if (recorder < 0) {
    return std::make_unique<PlainRunner>(std::move(setup),
                                         "\ncuda graphs: not used: " + why + "\n");
  }
  return std::make_unique<RecordedRunner>(std::move(setup), recorder);
}

}  // namespace recur
