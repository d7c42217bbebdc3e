// SequenceMap (opset 17): runs `body` once per element of the input sequence. Sequence inputs
// give the body their i-th tensor, tensor inputs are passed whole; each body output becomes
// one output sequence.
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

class SequenceMapKernel final : public Kernel {
 public:
  SequenceMapKernel(std::shared_ptr<const SubgraphPlan> body, std::vector<DType> output_types)
      : body_(std::move(body)), output_types_(std::move(output_types)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* first, sequence_input(ctx, 0));
    const size_t n = first->elements().size();
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
      if (t->is_sequence() && t->elements().size() != n) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(i) + " is a sequence of " +
                             std::to_string(t->elements().size()) + " tensors but input 0 has " +
                             std::to_string(n));
      }
      ins.push_back(t);
    }
    std::vector<std::vector<Tensor>> results(output_types_.size());
    std::vector<Tensor> body_inputs(ins.size());
    for (size_t e = 0; e < n; ++e) {
      for (size_t i = 0; i < ins.size(); ++i)
        body_inputs[i] = ins[i]->is_sequence() ? ins[i]->elements()[e] : *ins[i];
      RECUR_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                             ctx.env().subgraphs->run(*body_, body_inputs, ctx));
      if (outs.size() != results.size()) {
        return ctx.error(ErrorCode::kInvalidModel,
                         "the body returned " + std::to_string(outs.size()) + " outputs");
      }
      for (size_t k = 0; k < outs.size(); ++k) {
        if (outs[k].is_sequence() ||
            (!results[k].empty() && outs[k].dtype() != results[k].front().dtype())) {
          return ctx.error(ErrorCode::kInvalidArgument,
                           "body output " + std::to_string(k) +
                               " must be a tensor of one dtype in every iteration");
        }
        results[k].push_back(std::move(outs[k]));
      }
    }
    for (size_t k = 0; k < results.size(); ++k) {
      const DType dt = results[k].empty() ? output_types_[k] : results[k].front().dtype();
      RECUR_RETURN_IF_ERROR(ctx.set_output(k, Tensor::sequence(std::move(results[k]), dt)));
    }
    return ok_status();
  }

 private:
  std::shared_ptr<const SubgraphPlan> body_;
  std::vector<DType> output_types_;  // element types, for an empty input sequence
};

Result<std::unique_ptr<Kernel>> create_sequence_map(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const Graph* body = attrs.require_graph("body");
  RECUR_RETURN_IF_ERROR(attrs.status());
  const Node& node = ctx.node();
  if (body->inputs().size() != node.inputs.size() ||
      body->outputs().size() != node.outputs.size()) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "the body has " + std::to_string(body->inputs().size()) + " inputs and " +
                         std::to_string(body->outputs().size()) + " outputs, the node " +
                         std::to_string(node.inputs.size()) + " and " +
                         std::to_string(node.outputs.size()));
  }
  std::vector<DType> types;
  for (ValueId v : body->outputs()) types.push_back(body->value(v).type.dtype);
  RECUR_ASSIGN_OR_RETURN(auto plan, ctx.compile_subgraph(*body));
  return std::make_unique<SequenceMapKernel>(std::move(plan), std::move(types));
}

Status infer_sequence_map(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  const Graph* body = attrs.get_graph("body");
  if (!body) return ok_status();
  for (size_t k = 0; k < ctx.num_outputs() && k < body->outputs().size(); ++k)
    ctx.set_output(k, sequence_type(body->value(body->outputs()[k]).type.dtype));
  return ok_status();
}

}  // namespace

void register_sequence_map(Registrar& r) {
  r.add({.op_type = "SequenceMap",
         .since = 17,
         .create = create_sequence_map,
         .takes_strings = true,
         .takes_sequences = true},
        infer_sequence_map);
}

}  // namespace recur::reference
