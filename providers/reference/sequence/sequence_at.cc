// SequenceAt: the tensor at `position` of a sequence, in [-n, n - 1].
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

class SequenceAtKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* p, tensor_input(ctx, 1));
    const std::vector<Tensor>& elements = seq->elements();
    RECUR_ASSIGN_OR_RETURN(int64_t pos,
                           read_position(ctx, *p, static_cast<int64_t>(elements.size()), 0));
    return ctx.set_output(0, elements[static_cast<size_t>(pos)]);
  }
};

}  // namespace

void register_sequence_at(Registrar& r) {
  r.add({.op_type = "SequenceAt",
         .since = 11,
         .create = make_simple<SequenceAtKernel>(),
         .takes_strings = true,
         .takes_sequences = true},
        [](InferContext& c) -> Status {
          TypeInfo t;
          t.dtype = c.input_type(0).element_dtype;
          c.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
