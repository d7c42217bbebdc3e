#include "providers/reference/common/util.h"
#include "providers/reference/control/control_ops.h"
#include "runtime/core/memory_budget.h"

namespace recur::reference {

namespace {

struct ScanConfig {
  size_t num_states = 0;
  size_t num_scan_inputs = 0;
  size_t num_scan_outputs = 0;
  std::vector<int64_t> input_directions;
  std::vector<int64_t> output_directions;
  std::vector<int64_t> input_axes;
  std::vector<int64_t> output_axes;
  bool batched = false;  // opset 8: a leading batch axis and an optional sequence_lens input
  std::vector<std::pair<DType, Shape>> output_types;  // element types for T == 0
};

class ScanKernel final : public Kernel {
 public:
  ScanKernel(std::shared_ptr<const SubgraphPlan> body, ScanConfig cfg)
      : body_(std::move(body)), cfg_(std::move(cfg)) {}

  Status run(KernelContext& ctx) const override {
    // Scan inputs (and, in opset 8, the states too) are sliced along an axis: a sequence has
    // none.
    const size_t offset = cfg_.batched ? 1 : 0;
    for (size_t i = offset; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      const bool sliced = cfg_.batched || i >= offset + cfg_.num_states;
      if (t && sliced && t->is_sequence()) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(i) + " is a sequence, which cannot be scanned");
      }
    }
    return cfg_.batched ? run_batched(ctx) : run_unbatched(ctx);
  }

 private:
  // One scan over states and inputs without a batch axis; returns states then scan outputs.
  Result<std::vector<Tensor>> scan(const KernelContext& ctx, std::vector<Tensor> states,
                                   const std::vector<Tensor>& inputs, int64_t steps,
                                   int64_t len) const {
    const size_t n = cfg_.num_states;
    std::vector<std::vector<Tensor>> collected(cfg_.num_scan_outputs);
    // The stacked outputs will need as many bytes as their parts: counted as they grow.
    MemoryReservation stacked_bytes;
    std::vector<Tensor> body_inputs(n + inputs.size());
    for (int64_t t = 0; t < len; ++t) {
      RECUR_RETURN_IF_ERROR(ctx.check_cancelled("iteration", t));
      for (size_t i = 0; i < n; ++i) body_inputs[i] = states[i];
      for (size_t j = 0; j < inputs.size(); ++j) {
        const int64_t axis = cfg_.input_axes[j];
        const int64_t index = cfg_.input_directions[j] ? len - 1 - t : t;
        body_inputs[n + j] = slice_along(inputs[j], axis, index);
      }
      auto run = ctx.env().subgraphs->run(*body_, body_inputs, ctx);
      if (!run.ok()) return iteration_error(ctx, t, run.status());
      std::vector<Tensor>& outs = *run;
      if (outs.size() != n + cfg_.num_scan_outputs) {
        return ctx.error(ErrorCode::kInvalidModel,
                         "the body returned " + std::to_string(outs.size()) + " outputs");
      }
      size_t grow = 0;
      for (size_t k = 0; k < cfg_.num_scan_outputs; ++k) grow += outs[n + k].nbytes();
      if (Status st = stacked_bytes.grow(grow, "the scan outputs stacked so far"); !st.ok()) {
        return iteration_error(ctx, t, st);
      }
      for (size_t i = 0; i < n; ++i) states[i] = std::move(outs[i]);
      for (size_t k = 0; k < cfg_.num_scan_outputs; ++k)
        collected[k].push_back(std::move(outs[n + k]));
    }
    stacked_bytes.release();
    std::vector<Tensor> result = std::move(states);
    for (size_t k = 0; k < cfg_.num_scan_outputs; ++k) {
      const auto& [dtype, elem] = cfg_.output_types[k];
      // Steps past `len` (opset 8 sequence_lens) are zeros.
      std::vector<Tensor>& parts = collected[k];
      const bool reverse = cfg_.output_directions[k] != 0;
      if (len < steps && !parts.empty()) {
        for (int64_t t = len; t < steps; ++t)
          parts.push_back(Tensor::zeros(parts[0].dtype(), parts[0].shape()));
      }
      const DType dt = parts.empty() ? dtype : parts[0].dtype();
      auto stacked = stack_tensors(parts, cfg_.output_axes[k], reverse, dt, elem);
      if (!stacked.ok()) return stacked.status().with_context(ctx.node().describe());
      result.push_back(std::move(stacked).value());
    }
    return result;
  }

  Result<int64_t> scan_length(const KernelContext& ctx, const std::vector<Tensor>& inputs,
                              std::vector<int64_t>* axes) const {
    int64_t len = -1;
    for (size_t j = 0; j < inputs.size(); ++j) {
      auto axis = normalize_axis(cfg_.input_axes[j], inputs[j].rank(), "scan_input_axes value");
      if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
      (*axes)[j] = *axis;
      const int64_t l = inputs[j].dim(*axis);
      if (len >= 0 && l != len) {
        return ctx.error(ErrorCode::kInvalidArgument, "scan inputs have different lengths " +
                                                          std::to_string(len) + " and " +
                                                          std::to_string(l));
      }
      len = l;
    }
    if (len < 0) return ctx.error(ErrorCode::kInvalidModel, "Scan has no scan inputs");
    const int64_t limit = ctx.env().max_loop_iterations;
    if (limit > 0 && len > limit) {
      return ctx.error(ErrorCode::kOutOfRange, "the scan length " + std::to_string(len) +
                                                   " is above the iteration limit " +
                                                   std::to_string(limit));
    }
    return len;
  }

  Status run_unbatched(KernelContext& ctx) const {
    std::vector<Tensor> states, inputs;
    for (size_t i = 0; i < cfg_.num_states + cfg_.num_scan_inputs; ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
      (i < cfg_.num_states ? states : inputs).push_back(*t);
    }
    std::vector<int64_t> axes(inputs.size());
    RECUR_ASSIGN_OR_RETURN(int64_t len, scan_length(ctx, inputs, &axes));
    ScanKernel copy = *this;
    copy.cfg_.input_axes = axes;
    RECUR_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                           copy.scan(ctx, std::move(states), inputs, len, len));
    for (size_t i = 0; i < outs.size(); ++i) RECUR_RETURN_IF_ERROR(ctx.set_output(i, outs[i]));
    return ok_status();
  }

  // Opset 8: every state and scan input has a leading batch axis; scan inputs are [B, T, ...].
  Status run_batched(KernelContext& ctx) const {
    const Tensor* lens = ctx.input(0);
    std::vector<Tensor> states, inputs;
    for (size_t i = 0; i < cfg_.num_states + cfg_.num_scan_inputs; ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, 1 + i));
      if (t->rank() < (i < cfg_.num_states ? 1 : 2)) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(1 + i) + " lacks the batch (and time) axes");
      }
      (i < cfg_.num_states ? states : inputs).push_back(*t);
    }
    const int64_t batch = states.empty() ? inputs.at(0).dim(0) : states[0].dim(0);
    const int64_t steps = inputs.empty() ? 0 : inputs[0].dim(1);
    for (const Tensor& t : inputs) {
      if (t.dim(0) != batch || t.dim(1) != steps) {
        return ctx.error(ErrorCode::kInvalidArgument, "scan inputs disagree on batch or length");
      }
    }
    std::vector<int64_t> seq(static_cast<size_t>(batch), steps);
    if (lens) {
      auto v = read_int_values(*lens, "sequence_lens");
      if (!v.ok() || static_cast<int64_t>(v->size()) != batch) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "sequence_lens must hold one length per batch entry");
      }
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t l = (*v)[static_cast<size_t>(b)];
        if (l < 0 || l > steps) {
          return ctx.error(ErrorCode::kOutOfRange,
                           "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(l) +
                               " is outside [0, " + std::to_string(steps) + "]");
        }
        seq[static_cast<size_t>(b)] = l;
      }
    }
    std::vector<std::vector<Tensor>> per_output(cfg_.num_states + cfg_.num_scan_outputs);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> st, in;
      for (const Tensor& s : states) st.push_back(slice_along(s, 0, b));
      for (const Tensor& x : inputs) in.push_back(slice_along(x, 0, b));
      RECUR_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                             scan(ctx, std::move(st), in, steps, seq[static_cast<size_t>(b)]));
      for (size_t k = 0; k < outs.size(); ++k) per_output[k].push_back(std::move(outs[k]));
    }
    for (size_t k = 0; k < per_output.size(); ++k) {
      const DType dt = per_output[k].empty() ? DType::kFloat32 : per_output[k][0].dtype();
      auto stacked = stack_tensors(per_output[k], 0, false, dt, {});
      if (!stacked.ok()) return stacked.status().with_context(ctx.node().describe());
      RECUR_RETURN_IF_ERROR(ctx.set_output(k, std::move(stacked).value()));
    }
    return ok_status();
  }

  std::shared_ptr<const SubgraphPlan> body_;
  ScanConfig cfg_;
};

Result<std::unique_ptr<Kernel>> create_scan(CompileContext& ctx) {
  const Node& node = ctx.node();
  AttrReader attrs(node);
  const Graph* body = attrs.require_graph("body");
  const int64_t m = attrs.require_int("num_scan_inputs");
  ScanConfig cfg;
  cfg.batched = ctx.opset() < 9;
  cfg.input_directions = attrs.get_ints(cfg.batched ? "directions" : "scan_input_directions");
  cfg.output_directions = attrs.get_ints("scan_output_directions");
  cfg.input_axes = attrs.get_ints("scan_input_axes");
  cfg.output_axes = attrs.get_ints("scan_output_axes");
  RECUR_RETURN_IF_ERROR(attrs.status());
  const size_t offset = cfg.batched ? 1 : 0;  // opset 8's sequence_lens
  if (m < 1 || node.inputs.size() < offset + static_cast<size_t>(m)) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "num_scan_inputs " + std::to_string(m) + " does not fit the node's inputs");
  }
  cfg.num_scan_inputs = static_cast<size_t>(m);
  cfg.num_states = node.inputs.size() - offset - cfg.num_scan_inputs;
  if (body->inputs().size() != cfg.num_states + cfg.num_scan_inputs ||
      body->outputs().size() != node.outputs.size() || node.outputs.size() < cfg.num_states) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "the body's inputs and outputs do not match the node's states and scans");
  }
  cfg.num_scan_outputs = node.outputs.size() - cfg.num_states;
  auto fill = [&](std::vector<int64_t>& v, size_t n, const char* name) -> Status {
    if (v.empty()) v.assign(n, 0);
    if (v.size() != n) {
      return ctx.error(ErrorCode::kInvalidModel,
                       std::string(name) + " must have " + std::to_string(n) + " entries");
    }
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(fill(cfg.input_directions, cfg.num_scan_inputs, "scan_input_directions"));
  RECUR_RETURN_IF_ERROR(
      fill(cfg.output_directions, cfg.num_scan_outputs, "scan_output_directions"));
  RECUR_RETURN_IF_ERROR(fill(cfg.input_axes, cfg.num_scan_inputs, "scan_input_axes"));
  RECUR_RETURN_IF_ERROR(fill(cfg.output_axes, cfg.num_scan_outputs, "scan_output_axes"));
  if (cfg.batched) {
    // Inside a batch entry the time axis is the first.
    std::fill(cfg.input_axes.begin(), cfg.input_axes.end(), 0);
    std::fill(cfg.output_axes.begin(), cfg.output_axes.end(), 0);
  }
  for (size_t k = 0; k < cfg.num_scan_outputs; ++k) {
    const TypeInfo& t = body->value(body->outputs()[cfg.num_states + k]).type;
    cfg.output_types.emplace_back(t.dtype == DType::kUndefined ? DType::kFloat32 : t.dtype,
                                  t.is_static() ? t.static_shape() : Shape{});
  }
  RECUR_ASSIGN_OR_RETURN(auto plan, ctx.compile_subgraph(*body));
  return std::make_unique<ScanKernel>(std::move(plan), std::move(cfg));
}

}  // namespace

void register_scan(Registrar& r) {
  // States may be strings or sequences (run() refuses sliced sequences); slicing and stacking
  // copy strings element by element.
  r.add({.op_type = "Scan",
         .since = 8,
         .create = create_scan,
         .takes_strings = true,
         .takes_sequences = true});
}

}  // namespace recur::reference
