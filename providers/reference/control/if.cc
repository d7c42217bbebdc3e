#include "providers/reference/common/util.h"
#include "providers/reference/control/control_ops.h"

namespace recur::reference {

namespace {

class IfKernel final : public Kernel {
 public:
  IfKernel(std::shared_ptr<const SubgraphPlan> then_plan,
           std::shared_ptr<const SubgraphPlan> else_plan)
      : then_(std::move(then_plan)), else_(std::move(else_plan)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* cond, required_input(ctx, 0));
    if (cond->dtype() != DType::kBool || cond->numel() != 1) {
      return ctx.error(ErrorCode::kInvalidArgument, "cond must be a single bool, got " +
                                                        std::string(dtype_name(cond->dtype())) +
                                                        shape_to_string(cond->shape()));
    }
    const SubgraphPlan& branch = *cond->data<bool>() ? *then_ : *else_;
    SubgraphOutputs held;
    std::vector<Tensor>& outs = held.tensors();
    RECUR_RETURN_IF_ERROR(ctx.env().subgraphs->run_into(branch, {}, ctx, outs));
    if (outs.size() != ctx.num_outputs()) {
      return ctx.error(ErrorCode::kInvalidModel, "the branch has " + std::to_string(outs.size()) +
                                                     " outputs but the node has " +
                                                     std::to_string(ctx.num_outputs()));
    }
    for (size_t i = 0; i < outs.size(); ++i) RECUR_RETURN_IF_ERROR(ctx.set_output(i, outs[i]));
    return ok_status();
  }

 private:
  std::shared_ptr<const SubgraphPlan> then_;
  std::shared_ptr<const SubgraphPlan> else_;
};

Result<std::unique_ptr<Kernel>> create_if(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const Graph* then_graph = attrs.require_graph("then_branch");
  const Graph* else_graph = attrs.require_graph("else_branch");
  RECUR_RETURN_IF_ERROR(attrs.status());
  for (const Graph* g : {then_graph, else_graph}) {
    if (g->outputs().size() != ctx.node().outputs.size()) {
      return ctx.error(ErrorCode::kInvalidModel, "branch '" + g->name() + "' has " +
                                                     std::to_string(g->outputs().size()) +
                                                     " outputs but the node has " +
                                                     std::to_string(ctx.node().outputs.size()));
    }
  }
  RECUR_ASSIGN_OR_RETURN(auto then_plan, ctx.compile_subgraph(*then_graph));
  RECUR_ASSIGN_OR_RETURN(auto else_plan, ctx.compile_subgraph(*else_graph));
  return std::make_unique<IfKernel>(std::move(then_plan), std::move(else_plan));
}

}  // namespace

// The branches' outputs pass through whatever they are: strings, sequences.
void register_if(Registrar& r) {
  r.add({.op_type = "If",
         .since = 1,
         .create = create_if,
         .takes_strings = true,
         .takes_sequences = true,
         .takes_optionals = true});
}

}  // namespace recur::reference
