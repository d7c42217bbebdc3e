#include <algorithm>

#include "providers/reference/common/util.h"
#include "providers/reference/control/control_ops.h"
#include "runtime/core/memory_budget.h"

namespace recur::reference {

namespace {

// The iteration number and cond passed to the body: written in place, unless the body kept the
// previous one (an Identity to a scan output), which then stays as it was.
template <typename T>
void set_scalar(Tensor& t, T value) {
  if (t.defined() && t.owner().use_count() == 1) {
    *t.data<T>() = value;
  } else {
    t = Tensor::scalar<T>(value);
  }
}

// Loop: inputs (M, cond, v_initial...), body (iteration, cond, v...) -> (cond, v..., scan...),
// outputs (v_final..., scan outputs stacked along a new first axis).
class LoopKernel final : public Kernel {
 public:
  LoopKernel(std::shared_ptr<const SubgraphPlan> body, size_t num_carried,
             std::vector<std::pair<DType, Shape>> scan_types)
      : body_(std::move(body)), num_carried_(num_carried), scan_types_(std::move(scan_types)) {}

  Status run(KernelContext& ctx) const override {
    const int64_t limit = ctx.env().max_loop_iterations;
    int64_t trip_count = -1;  // unbounded unless M is given
    if (const Tensor* m = ctx.input(0)) {
      if (m->dtype() != DType::kInt64 || m->numel() != 1) {
        return ctx.error(ErrorCode::kInvalidArgument, "trip count M must be a single int64");
      }
      // A negative M runs no iteration, as in ONNX Runtime and as Python's `range(n)` does for
      // the scripted `for i in range(n)` that PyTorch exports with M = n.
      trip_count = std::max<int64_t>(*m->data<int64_t>(), 0);
      // M is only an upper bound: the body's cond output ends the loop too (with or without a
      // cond input, as in ONNX Runtime), and PyTorch writes INT64_MAX for a scripted loop that
      // ends with `break` or a `while`. So the limit counts the iterations that run.
    }
    bool cond = true;
    if (const Tensor* c = ctx.input(1)) {
      if (c->dtype() != DType::kBool || c->numel() != 1) {
        return ctx.error(ErrorCode::kInvalidArgument, "cond must be a single bool");
      }
      cond = *c->data<bool>();
    }
    // The carried values pass from iteration to iteration by move, and are taken from the
    // frame where the Loop is their last reader: a value held by nothing else (a sequence the
    // body grows with SequenceInsert) then stays unshared, and grows in place.
    std::vector<Tensor> carried;
    for (size_t i = 0; i < num_carried_; ++i) {
      Tensor v = ctx.take_input(2 + i);
      if (!v.defined())
        return ctx.error(ErrorCode::kInvalidArgument,
                         "loop-carried input " + std::to_string(i) + " is missing");
      carried.push_back(std::move(v));
    }
    std::vector<std::vector<Tensor>> scans(scan_types_.size());
    // The stacked scan outputs will need as many bytes as their parts: counted as the parts
    // arrive, so that a loop without a trip count stops at the memory limit, not after it.
    MemoryReservation stacked_bytes;
    std::vector<Tensor> body_inputs(2 + num_carried_);
    // The iteration number and cond, rewritten in place unless the body kept them.
    Tensor iteration, cond_in;
    SubgraphOutputs held;  // keeps its capacity from iteration to iteration and run to run
    std::vector<Tensor>& outs = held.tensors();
    for (int64_t it = 0; cond && (trip_count < 0 || it < trip_count); ++it) {
      if (limit > 0 && it >= limit) {
        return ctx.error(ErrorCode::kOutOfRange, "the loop ran " + std::to_string(it) +
                                                     " iterations without stopping; the limit is " +
                                                     std::to_string(limit) +
                                                     " (SessionOptions::max_loop_iterations)");
      }
      RECUR_RETURN_IF_ERROR(ctx.check_cancelled("iteration", it));
      set_scalar(iteration, it);
      set_scalar(cond_in, cond);
      body_inputs[0] = iteration;
      body_inputs[1] = cond_in;
      for (size_t i = 0; i < num_carried_; ++i) body_inputs[2 + i] = std::move(carried[i]);
      Status st = ctx.env().subgraphs->run_moving_into(*body_, body_inputs, ctx, outs);
      if (!st.ok()) return iteration_error(ctx, it, st);
      RECUR_RETURN_IF_ERROR(take_outputs(ctx, it, outs, cond, carried, scans, stacked_bytes));
    }
    stacked_bytes.release();
    for (size_t i = 0; i < num_carried_; ++i) RECUR_RETURN_IF_ERROR(ctx.set_output(i, carried[i]));
    for (size_t k = 0; k < scans.size(); ++k) {
      const DType dt = scans[k].empty() ? scan_types_[k].first : scans[k].front().dtype();
      auto stacked = stack_tensors(scans[k], 0, false, dt, scan_types_[k].second);
      if (!stacked.ok()) return stacked.status().with_context(ctx.node().describe());
      RECUR_RETURN_IF_ERROR(ctx.set_output(num_carried_ + k, std::move(stacked).value()));
    }
    return ok_status();
  }

 private:
  // Iteration `it`'s body outputs: the next cond, the carried values and the scan parts.
  Status take_outputs(const KernelContext& ctx, int64_t it, std::vector<Tensor>& outs, bool& cond,
                      std::vector<Tensor>& carried, std::vector<std::vector<Tensor>>& scans,
                      MemoryReservation& stacked_bytes) const {
    if (outs.size() != 1 + num_carried_ + scans.size()) {
      return ctx.error(ErrorCode::kInvalidModel,
                       "the body returned " + std::to_string(outs.size()) + " outputs");
    }
    const Tensor& c = outs[0];
    if (c.dtype() != DType::kBool || c.numel() != 1) {
      return ctx.error(ErrorCode::kInvalidModel, "the body's cond output must be a single bool");
    }
    size_t grow = 0;
    for (size_t k = 0; k < scans.size(); ++k) grow += outs[1 + num_carried_ + k].nbytes();
    if (Status st = stacked_bytes.grow(grow, "the scan outputs stacked so far"); !st.ok()) {
      return iteration_error(ctx, it, st);
    }
    cond = *c.data<bool>();
    for (size_t i = 0; i < num_carried_; ++i) carried[i] = std::move(outs[1 + i]);
    for (size_t k = 0; k < scans.size(); ++k)
      scans[k].push_back(std::move(outs[1 + num_carried_ + k]));
    return ok_status();
  }

  std::shared_ptr<const SubgraphPlan> body_;
  size_t num_carried_;
  // dtype and element shape of each scan output, for the zero-iteration case.
  std::vector<std::pair<DType, Shape>> scan_types_;
};

Result<std::unique_ptr<Kernel>> create_loop(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const Graph* body = attrs.require_graph("body");
  RECUR_RETURN_IF_ERROR(attrs.status());
  const Node& node = ctx.node();
  if (node.inputs.size() < 2) {
    return ctx.error(ErrorCode::kInvalidModel, "Loop needs the inputs M and cond (\"\" if absent)");
  }
  const size_t num_carried = node.inputs.size() - 2;
  if (body->inputs().size() != 2 + num_carried) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "the body takes " + std::to_string(body->inputs().size()) +
                         " inputs but the node passes 2 + " + std::to_string(num_carried));
  }
  // The body returns cond, the loop-carried values and the scan outputs; the node returns the
  // last two.
  if (body->outputs().size() < 1 + num_carried ||
      body->outputs().size() != node.outputs.size() + 1) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "the body has " + std::to_string(body->outputs().size()) +
                         " outputs, which does not match the node's " +
                         std::to_string(node.outputs.size()) + " outputs and " +
                         std::to_string(num_carried) + " loop-carried values");
  }
  std::vector<std::pair<DType, Shape>> scan_types;
  for (size_t k = 1 + num_carried; k < body->outputs().size(); ++k) {
    const TypeInfo& t = body->value(body->outputs()[k]).type;
    scan_types.emplace_back(t.dtype == DType::kUndefined ? DType::kFloat32 : t.dtype,
                            t.is_static() ? t.static_shape() : Shape{});
  }
  RECUR_ASSIGN_OR_RETURN(auto plan, ctx.compile_subgraph(*body));
  return std::make_unique<LoopKernel>(std::move(plan), num_carried, std::move(scan_types));
}

}  // namespace

void register_loop(Registrar& r) {
  // Loop-carried values may be strings or sequences; scan outputs are stacked with
  // copy_elements, and stack_tensors refuses sequences.
  r.add({.op_type = "Loop",
         .since = 1,
         .create = create_loop,
         .takes_strings = true,
         .takes_sequences = true,
         .takes_optionals = true});
}

}  // namespace recur::reference
