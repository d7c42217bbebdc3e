// SequenceConstruct: a sequence of its inputs, which are tensors of one dtype.
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

class SequenceConstructKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    std::vector<Tensor> elements;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, tensor_input(ctx, i));
      if (!elements.empty() && t->dtype() != elements.front().dtype()) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(i) + " is " +
                             std::string(dtype_name(t->dtype())) + " but input 0 is " +
                             std::string(dtype_name(elements.front().dtype())));
      }
      elements.push_back(*t);
    }
    if (elements.empty()) return ctx.error(ErrorCode::kInvalidArgument, "no inputs");
    const DType dtype = elements.front().dtype();
    return ctx.set_output(0, Tensor::sequence(std::move(elements), dtype));
  }
};

}  // namespace

void register_sequence_construct(Registrar& r) {
  r.add({.op_type = "SequenceConstruct",
         .since = 11,
         .create = make_simple<SequenceConstructKernel>(),
         .takes_strings = true},
        [](InferContext& c) -> Status {
          c.set_output(0,
                       sequence_type(c.num_inputs() ? c.input_type(0).dtype : DType::kUndefined));
          return ok_status();
        });
}

}  // namespace recur::reference
