// SequenceLength: the number of tensors in a sequence, as an int64 scalar.
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

class SequenceLengthKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0));
    return ctx.set_output(0, Tensor::scalar<int64_t>(static_cast<int64_t>(seq->elements().size())));
  }
};

}  // namespace

void register_sequence_length(Registrar& r) {
  r.add({.op_type = "SequenceLength",
         .since = 11,
         .create = make_simple<SequenceLengthKernel>(),
         .takes_strings = true,
         .takes_sequences = true},
        [](InferContext& c) -> Status {
          c.set_output(0, TypeInfo::of(DType::kInt64, {}));
          return ok_status();
        });
}

}  // namespace recur::reference
