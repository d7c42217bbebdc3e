// Runs a SubgraphPlan over a frame of tensors.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "runtime/engine/session/memory_plan.h"
#include "runtime/engine/session/plan.h"
#include "runtime/engine/session/profiler.h"
#include "runtime/provider/kernel.h"

namespace recur {

class Executor final : public SubgraphRunner {
 public:
  // `envs` holds one environment per provider of the plan, indexed like SubgraphPlan::providers.
  // A run profiled by this thread (ProfileRun) is recorded step by step.
  // With `arena`, outputs take memory from it and subgraphs run in its frames.
  explicit Executor(std::span<const KernelContext::Env> envs, RunArena* arena = nullptr)
      : envs_(envs), profile_(ProfileBuffer::current()), arena_(arena) {}

  // Runs the steps. `frame` has plan.num_slots entries with the inputs already placed;
  // `placer`, when given, gives the kernels' outputs their memory. `needed`, when not empty,
  // has one entry per step, and only the steps whose entry is 1 run (the rest still free
  // what their liveness says).
  Status execute(const SubgraphPlan& plan, std::vector<Tensor>& frame,
                 OutputPlacer* placer = nullptr, std::span<const uint8_t> needed = {}) const;

  Status run_into(const SubgraphPlan& plan, std::span<const Tensor> inputs,
                  const KernelContext& caller, std::vector<Tensor>& outputs) const override;
  Status run_moving_into(const SubgraphPlan& plan, std::span<Tensor> inputs,
                         const KernelContext& caller, std::vector<Tensor>& outputs) const override;

 private:
  // run_into's body; take(i) gives input i (a copy, or the caller's tensor moved).
  template <class Take>
  Status run_with(const SubgraphPlan& plan, size_t num_inputs, const Take& take,
                  const KernelContext& caller, std::vector<Tensor>& out) const;
  Status run_step(const SubgraphPlan& plan, const Step& step, std::vector<Tensor>& frame,
                  OutputPlacer* placer) const;

  std::span<const KernelContext::Env> envs_;
  ProfileBuffer* profile_;
  RunArena* arena_;
};

// Places the plan's constants into a fresh frame.
std::vector<Tensor> new_frame(const SubgraphPlan& plan);

}  // namespace recur
