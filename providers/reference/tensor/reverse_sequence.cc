// ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] steps along
// time_axis and copies the rest. time_axis and batch_axis are 0 and 1, in either order.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(int64_t time_axis, int64_t batch_axis)
      : time_axis_(time_axis), batch_axis_(batch_axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* lens_t, required_input(ctx, 1));
    if (x->rank() < 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input must have rank >= 2, not shape " + shape_to_string(x->shape()));
    }
    const auto ta = static_cast<size_t>(time_axis_), ba = static_cast<size_t>(batch_axis_);
    const int64_t steps = x->shape()[ta], batch = x->shape()[ba];
    auto lens = read_int_values(*lens_t, "sequence_lens");
    if (!lens.ok()) return lens.status().with_context(ctx.node().describe());
    if (lens_t->rank() != 1 || static_cast<int64_t>(lens->size()) != batch) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "sequence_lens has shape " + shape_to_string(lens_t->shape()) +
                           " but the batch size is " + std::to_string(batch));
    }
    for (int64_t l : *lens) {
      if (l < 0 || l > steps) {
        return ctx.error(ErrorCode::kOutOfRange, "sequence length " + std::to_string(l) +
                                                     " is outside [0, " + std::to_string(steps) +
                                                     "]");
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->numel() == 0) return ok_status();
    const Shape strides = contiguous_strides(x->shape());
    const size_t esize = dtype_size(x->dtype());
    const size_t block = static_cast<size_t>(strides[1]) * esize;  // one (step, batch) entry
    const auto* src = static_cast<const char*>(x->raw_data());
    auto* dst = static_cast<char*>(out->raw_data());
    if (block == 0) return ok_status();
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = (*lens)[static_cast<size_t>(b)];
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t from = t < len ? len - 1 - t : t;
        const int64_t out_off = t * strides[ta] + b * strides[ba];
        const int64_t in_off = from * strides[ta] + b * strides[ba];
        copy_bytes(dst + static_cast<size_t>(out_off) * esize,
                   src + static_cast<size_t>(in_off) * esize, block);
      }
    }
    return ok_status();
  }

 private:
  int64_t time_axis_, batch_axis_;
};

Result<std::unique_ptr<Kernel>> create_reverse_sequence(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t time_axis = attrs.get_int("time_axis", 0);
  const int64_t batch_axis = attrs.get_int("batch_axis", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "time_axis and batch_axis must be 0 and 1 in some order, not " +
                         std::to_string(time_axis) + " and " + std::to_string(batch_axis));
  }
  return std::make_unique<ReverseSequenceKernel>(time_axis, batch_axis);
}

}  // namespace

void register_reverse_sequence(Registrar& r) {
  r.add({.op_type = "ReverseSequence", .since = 10, .create = create_reverse_sequence},
        infer_same_as_input0);
}

}  // namespace recur::reference
