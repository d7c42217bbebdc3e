// SpaceToDepth: [N, C, H, W] -> [N, C*b^2, H/b, W/b], the inverse of DepthToSpace's DCR mode.
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class SpaceToDepthKernel final : public Kernel {
 public:
  explicit SpaceToDepthKernel(int64_t block) : block_(block) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 4) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input must be 4-D [N,C,H,W], not shape " + shape_to_string(x->shape()));
    }
    const int64_t b = block_, n = x->shape()[0], c = x->shape()[1], h = x->shape()[2],
                  w = x->shape()[3];
    if (h % b != 0 || w % b != 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "height and width of " + shape_to_string(x->shape()) +
                           " are not multiples of blocksize " + std::to_string(b));
    }
    int64_t oc = 0;
    if (__builtin_mul_overflow(c, b * b, &oc)) {
      return ctx.error(ErrorCode::kOutOfRange, "the output of " + shape_to_string(x->shape()) +
                                                   " with blocksize " + std::to_string(b) +
                                                   " is too large");
    }
    const Shape view = {n, c, h / b, b, w / b, b};
    const std::vector<int64_t> perm = {0, 3, 5, 1, 2, 4};
    Shape moved;
    for (int64_t p : perm) moved.push_back(view[static_cast<size_t>(p)]);
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), {n, oc, h / b, w / b}));
    Tensor out6 = out->reshaped(moved);
    permute_copy(x->reshaped(view), out6, perm);
    return ok_status();
  }

 private:
  int64_t block_;
};

Result<std::unique_ptr<Kernel>> create_space_to_depth(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t block = attrs.require_int("blocksize");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (block <= 0 || block > (int64_t{1} << 31)) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "blocksize " + std::to_string(block) + " must be in [1, 2^31]");
  }
  return std::make_unique<SpaceToDepthKernel>(block);
}

Status infer_space_to_depth(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  const int64_t b = AttrReader(ctx.node()).get_int("blocksize", 0);
  if (!in.shape || in.shape->size() != 4 || b <= 0 || b > (int64_t{1} << 31)) {
    ctx.set_output(0, type_with_rank(in.dtype, 4));
    return ok_status();
  }
  std::vector<Dim> out = *in.shape;
  int64_t oc = 0;
  out[1] =
      out[1].is_fixed() && !__builtin_mul_overflow(out[1].value, b * b, &oc) ? Dim{oc, {}} : Dim{};
  for (size_t d = 2; d < 4; ++d) out[d] = out[d].is_fixed() ? Dim{out[d].value / b, {}} : Dim{};
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_space_to_depth(Registrar& r) {
  r.add({.op_type = "SpaceToDepth", .since = 1, .create = create_space_to_depth},
        infer_space_to_depth);
}

}  // namespace recur::reference
