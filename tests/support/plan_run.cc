#include "tests/support/plan_run.h"

#include "providers/reference/reference_provider.h"
#include "runtime/engine/session/executor.h"
#include "runtime/engine/session/partitioner.h"
#include "runtime/graph/shape_inference.h"

namespace recur::testing {

Result<std::unique_ptr<ReferencePlanRun>> ReferencePlanRun::load(
    const std::string& model, const std::function<Status(Graph&)>& rewrite) {
  auto r = std::unique_ptr<ReferencePlanRun>(new ReferencePlanRun);
  RECUR_ASSIGN_OR_RETURN(r->model_,
                         load_model_from_bytes(model.data(), model.size(), ".", "<test>"));
  RECUR_RETURN_IF_ERROR(infer_shapes(*r->model_.graph, builtin_op_rules()));
  if (rewrite) {
    RECUR_RETURN_IF_ERROR(rewrite(*r->model_.graph));
    RECUR_RETURN_IF_ERROR(infer_shapes(*r->model_.graph, builtin_op_rules()));
  }
  r->provider_ = make_reference_provider();
  PartitionOptions po;
  po.session = &r->options_;
  RECUR_ASSIGN_OR_RETURN(r->plan_, build_plan(*r->model_.graph, {r->provider_.get()}, po));
  return r;
}

Result<std::vector<Tensor>> ReferencePlanRun::run(const std::vector<Tensor>& inputs) const {
  std::vector<Tensor> frame = new_frame(*plan_);
  if (inputs.size() != plan_->input_slots.size()) {
    return invalid_argument("the plan has " + std::to_string(plan_->input_slots.size()) +
                            " inputs, " + std::to_string(inputs.size()) + " were given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    frame[static_cast<size_t>(plan_->input_slots[i])] = inputs[i];
  }
  std::vector<KernelContext::Env> envs(plan_->providers.size());
  Executor ex(envs);
  for (auto& e : envs) e.subgraphs = &ex;  // an If or Loop runs its subgraphs through it
  RECUR_RETURN_IF_ERROR(ex.execute(*plan_, frame));
  std::vector<Tensor> out;
  for (ValueId v : plan_->output_slots) out.push_back(frame[static_cast<size_t>(v)]);
  return out;
}

}  // namespace recur::testing
