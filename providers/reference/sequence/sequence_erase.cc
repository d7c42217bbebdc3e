// SequenceErase: a new sequence without the tensor at `position` (default: the last one).
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

class SequenceEraseKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0));
    const auto n = static_cast<int64_t>(seq->elements().size());
    if (n == 0) return ctx.error(ErrorCode::kOutOfRange, "cannot erase from an empty sequence");
    int64_t pos = n - 1;
    if (const Tensor* p = ctx.input(1)) {
      RECUR_ASSIGN_OR_RETURN(pos, read_position(ctx, *p, n, 0));
    }
    // A sequence this node reads last and nothing else holds (one a Loop carries) shrinks in
    // place instead of being copied at every step.
    return ctx.set_output(0, Tensor::sequence_erase(ctx.take_input(0), static_cast<size_t>(pos)));
  }
};

}  // namespace

void register_sequence_erase(Registrar& r) {
  r.add({.op_type = "SequenceErase",
         .since = 11,
         .create = make_simple<SequenceEraseKernel>(),
         .takes_strings = true,
         .takes_sequences = true},
        [](InferContext& c) -> Status {
          c.set_output(0, sequence_type(c.input_type(0).element_dtype));
          return ok_status();
        });
}

}  // namespace recur::reference
