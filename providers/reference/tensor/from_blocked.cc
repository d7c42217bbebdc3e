// recur::FromBlocked (runtime/graph/blocked.h): a channel-blocked tensor
// [N, C/block, spatial..., block] back to [N, C, spatial...], element by element.
#include "providers/reference/common/blocked_copy.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "runtime/graph/blocked.h"

namespace recur::reference {

namespace {

class FromBlockedKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (!blockable_dtype(x->dtype()))
      return invalid_argument("X has dtype " + std::string(dtype_name(x->dtype())) +
                              ", not a float type");
    RECUR_ASSIGN_OR_RETURN(Shape shape, unblocked_shape(x->shape(), "X"));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
    if (y->numel() == 0) return ok_status();
    const int64_t N = shape[0], C = shape[1], S = y->numel() / (N * C);
    copy_channel_blocks(false, x->raw_data(), y->raw_data(), N, C, S, x->shape().back(),
                        dtype_size(x->dtype()));
    return ok_status();
  }
};

Status infer_from_blocked(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  TypeInfo out;
  out.dtype = x.dtype;
  if (x.has_rank() && x.rank() >= 4) {
    std::vector<Dim> dims(x.shape->begin(), x.shape->end() - 1);
    const Dim blocks = (*x.shape)[1], block = x.shape->back();
    dims[1] = Dim{};
    if (blocks.is_fixed() && block.is_fixed()) dims[1].value = blocks.value * block.value;
    out.shape = std::move(dims);
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_from_blocked(Registrar& r) {
  r.add({.op_type = kFromBlockedOp,
         .domain = kBlockedDomain,
         .since = 1,
         .create = make_simple<FromBlockedKernel>()},
        infer_from_blocked);
}

}  // namespace recur::reference
