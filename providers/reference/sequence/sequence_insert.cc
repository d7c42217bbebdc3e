// SequenceInsert: the sequence with `tensor` inserted at `position` (default: at the back).
// Positions range over [-n, n]; a negative one counts from the back.
#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

class SequenceInsertKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* seq, sequence_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* t, tensor_input(ctx, 1));
    const std::vector<Tensor>& old = seq->elements();
    const auto n = static_cast<int64_t>(old.size());
    if (seq->element_dtype() != DType::kUndefined && t->dtype() != seq->element_dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "cannot insert a " + std::string(dtype_name(t->dtype())) +
                           " tensor into a sequence of " +
                           std::string(dtype_name(seq->element_dtype())));
    }
    int64_t pos = n;
    if (const Tensor* p = ctx.input(2)) {
      RECUR_ASSIGN_OR_RETURN(pos, read_position(ctx, *p, n, 1));
    }
    // A sequence this node reads last and nothing else holds (one carried through a decoding
    // Loop) grows in place, instead of being copied whole at every step.
    const Tensor element = *t;
    return ctx.set_output(
        0, Tensor::sequence_insert(ctx.take_input(0), static_cast<size_t>(pos), element));
  }
};

}  // namespace

void register_sequence_insert(Registrar& r) {
  r.add({.op_type = "SequenceInsert",
         .since = 11,
         .create = make_simple<SequenceInsertKernel>(),
         .takes_strings = true,
         .takes_sequences = true},
        [](InferContext& c) -> Status {
          DType e = c.input_type(0).element_dtype;
          if (e == DType::kUndefined) e = c.input_type(1).dtype;
          c.set_output(0, sequence_type(e));
          return ok_status();
        });
}

}  // namespace recur::reference
