// recur::ToBlocked (runtime/graph/blocked.h): X [N, C, spatial...] to its channel-blocked form
// [N, C/block, spatial..., block], element by element.
#include "providers/reference/common/blocked_copy.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "runtime/graph/blocked.h"

namespace recur::reference {

namespace {

class ToBlockedKernel final : public Kernel {
 public:
  explicit ToBlockedKernel(int64_t block) : block_(block) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (!blockable_dtype(x->dtype()))
      return invalid_argument("X has dtype " + std::string(dtype_name(x->dtype())) +
                              ", not a float type");
    RECUR_ASSIGN_OR_RETURN(Shape shape, blocked_shape(x->shape(), block_, "X"));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
    if (y->numel() == 0) return ok_status();
    const int64_t N = x->dim(0), C = x->dim(1), S = x->numel() / (N * C);
    copy_channel_blocks(true, x->raw_data(), y->raw_data(), N, C, S, block_,
                        dtype_size(x->dtype()));
    return ok_status();
  }

 private:
  int64_t block_;
};

Status infer_to_blocked(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  TypeInfo out;
  out.dtype = x.dtype;
  AttrReader a(ctx.node());
  const int64_t block = a.get_int(kBlockAttr, 0);
  RECUR_RETURN_IF_ERROR(a.status());
  if (x.has_rank() && x.rank() >= 3) {
    std::vector<Dim> dims = *x.shape;
    const Dim c = dims[1];
    dims[1] = Dim{};
    if (c.is_fixed() && block > 0) {
      if (c.value % block != 0)
        return ctx.error("X's " + std::to_string(c.value) + " channels are not whole blocks");
      dims[1].value = c.value / block;
    }
    dims.push_back(Dim{block > 0 ? block : -1, {}});
    out.shape = std::move(dims);
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_to_blocked(Registrar& r) {
  r.add({.op_type = kToBlockedOp,
         .domain = kBlockedDomain,
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t block = a.require_int(kBlockAttr);
           RECUR_RETURN_IF_ERROR(a.status());
           if (block < 1) return ctx.error(ErrorCode::kInvalidModel, "block must be positive");
           return std::unique_ptr<Kernel>(std::make_unique<ToBlockedKernel>(block));
         }},
        infer_to_blocked);
}

}  // namespace recur::reference
