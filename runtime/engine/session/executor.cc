#include "runtime/engine/session/executor.h"

#include <exception>
#include <utility>

#include "runtime/core/device_memory.h"

namespace recur {

std::vector<Tensor> new_frame(const SubgraphPlan& plan) {
  std::vector<Tensor> frame(plan.num_slots);
  for (const auto& [slot, t] : plan.constants) frame[static_cast<size_t>(slot)] = t;
  return frame;
}

namespace {

Status run_kernel(const SubgraphPlan& plan, const Step& step, std::vector<Tensor>& frame,
                  const KernelContext::Env& env, OutputPlacer* placer) {
  const Node& node = plan.graph->node(step.node);
  const Device device = plan.providers[static_cast<size_t>(step.provider)]->device();
  // A value fed on another device than the plan expected (a caller's device tensor) is moved
  // here; planned copies make this a no-op in the common case.
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const ValueId v = step.inputs[i];
    if (v == kNoValue) continue;
    if (i < step.shape_only.size() && step.shape_only[i]) continue;  // only its shape is read
    const Device want = i < step.input_devices.size() ? step.input_devices[i] : device;
    Tensor& t = frame[static_cast<size_t>(v)];
    if (t.is_none() && !step.takes_optionals) {
      return invalid_argument(node.describe() + ": input " + std::to_string(i) +
                              " is an empty optional, which this operator does not take");
    }
    if ((t.dtype() == DType::kString && !step.takes_strings) ||
        (t.is_sequence() && !step.takes_sequences) || (t.is_map() && !step.takes_maps)) {
      return not_implemented(node.describe() + ": input " + std::to_string(i) + " is " +
                             (t.is_sequence() ? "a sequence"
                              : t.is_map()    ? "a map"
                                              : "a string tensor") +
                             ", which this operator does not take");
    }
    if (t.defined() && t.device() != want) {
      RECUR_ASSIGN_OR_RETURN(t, to_device(t, want));
    }
  }
  KernelContext ctx(node, frame, step.inputs, step.implicit_inputs, step.outputs, device, env);
  ctx.set_placer(placer);
  ctx.set_last_reads(step.last_read);
  ctx.set_overwritable(step.kernel->overwritable_inputs());
  Status st;
  try {
    st = step.kernel->run(ctx);
  } catch (const Error& e) {
    st = Status(e.code(), e.what());
  } catch (const std::exception& e) {
    st = internal_error(std::string("unexpected exception: ") + e.what());
  }
  if (!st.ok()) {
    if (st.message().rfind("node '", 0) == 0) return st;
    return st.with_context(node.describe());
  }
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const ValueId o = step.outputs[i];
    if (o != kNoValue && !frame[static_cast<size_t>(o)].defined()) {
      return internal_error(node.describe() + ": the kernel did not produce output " +
                            std::to_string(i));
    }
  }
  return ok_status();
}

}  // namespace

Status Executor::run_step(const SubgraphPlan& plan, const Step& step, std::vector<Tensor>& frame,
                          OutputPlacer* placer) const {
  if (step.kind == Step::Kind::kCopy) {
    const Tensor& src = frame[static_cast<size_t>(step.src)];
    if (!src.defined()) {
      frame[static_cast<size_t>(step.dst)] = Tensor();
    } else {
      RECUR_ASSIGN_OR_RETURN(frame[static_cast<size_t>(step.dst)], to_device(src, step.device));
    }
    return ok_status();
  }
  return run_kernel(plan, step, frame, envs_[static_cast<size_t>(step.provider)], placer);
}

Status Executor::execute(const SubgraphPlan& plan, std::vector<Tensor>& frame, OutputPlacer* placer,
                         std::span<const uint8_t> needed) const {
  // Released slots are assigned an empty tensor rather than moved from: the slot keeps its
  // shape storage for the next run, which then allocates nothing for it.
  static const Tensor kEmpty;
  const RunControl* control = envs_.empty() ? nullptr : envs_.front().control;
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& step = plan.steps[k];
    if (!needed.empty() && !needed[k]) {
      for (ValueId v : step.release) frame[static_cast<size_t>(v)] = kEmpty;
      continue;
    }
    if (control && step.kind == Step::Kind::kKernel) {
      if (Status st = control->check(); !st.ok()) {
        return Status(st.code(),
                      st.message() + " before " + plan.graph->node(step.node).describe() + " ran");
      }
    }
    if (profile_) {
      const int32_t record = profile_->begin_step(plan, k, frame);
      Status st = run_step(plan, step, frame, placer);
      profile_->end_step(record, st.ok());
      RECUR_RETURN_IF_ERROR(st);
    } else {
      RECUR_RETURN_IF_ERROR(run_step(plan, step, frame, placer));
    }
    for (ValueId v : step.release) frame[static_cast<size_t>(v)] = kEmpty;
  }
  return ok_status();
}

Status Executor::run_into(const SubgraphPlan& plan, std::span<const Tensor> inputs,
                          const KernelContext& caller, std::vector<Tensor>& out) const {
  return run_with(
      plan, inputs.size(), [&](size_t i) { return inputs[i]; }, caller, out);
}

Status Executor::run_moving_into(const SubgraphPlan& plan, std::span<Tensor> inputs,
                                 const KernelContext& caller, std::vector<Tensor>& out) const {
  return run_with(
      plan, inputs.size(), [&](size_t i) { return std::exchange(inputs[i], Tensor()); }, caller,
      out);
}

template <class Take>
Status Executor::run_with(const SubgraphPlan& plan, size_t num_inputs, const Take& take,
                          const KernelContext& caller, std::vector<Tensor>& out) const {
  const Graph& g = *plan.graph;
  if (num_inputs > plan.input_slots.size()) {
    return caller.error(ErrorCode::kInvalidArgument, "subgraph '" + g.name() + "' takes " +
                                                         std::to_string(plan.input_slots.size()) +
                                                         " inputs, got " +
                                                         std::to_string(num_inputs));
  }
  // The subgraph's frame in the run's arena (kept between calls and runs), else a fresh one.
  FrameArena* fa = arena_ ? arena_->enter(plan) : nullptr;
  struct Leave {
    RunArena* arena;
    FrameArena* f;
    ~Leave() {
      if (f) arena->leave(f);
    }
  } leave{arena_, fa};
  std::vector<Tensor> fresh;
  if (!fa) fresh = new_frame(plan);
  std::vector<Tensor>& frame = fa ? fa->frame : fresh;
  for (size_t i = 0; i < num_inputs; ++i) frame[static_cast<size_t>(plan.input_slots[i])] = take(i);
  for (size_t i = 0; i < plan.outer_slots.size(); ++i) {
    const Tensor* t = caller.implicit_input(plan.outer_from_implicit[i]);
    if (!t) {
      return caller.error(
          ErrorCode::kInternal,
          "captured value '" + g.value(plan.outer_slots[i]).name + "' has no value");
    }
    frame[static_cast<size_t>(plan.outer_slots[i])] = *t;
  }
  if (profile_) {
    // Body nodes are recorded under the calling node, numbered by iteration.
    const int32_t saved = profile_->enter_subgraph();
    Status st = execute(plan, frame, fa);
    profile_->leave_subgraph(saved);
    RECUR_RETURN_IF_ERROR(st);
  } else {
    RECUR_RETURN_IF_ERROR(execute(plan, frame, fa));
  }
  out.clear();
  for (ValueId v : plan.output_slots) {
    Tensor& t = frame[static_cast<size_t>(v)];
    if (!t.defined()) {
      return caller.error(ErrorCode::kInternal,
                          "subgraph output '" + g.value(v).name + "' was not produced");
    }
    if (!t.is_cpu()) {
      RECUR_ASSIGN_OR_RETURN(Tensor host, to_device(t, Device::cpu()));
      out.push_back(std::move(host));
    } else {
      out.push_back(t);
    }
  }
  return ok_status();
}

}  // namespace recur
