// DepthToSpace: [N, C, H, W] -> [N, C/b^2, H*b, W*b], moving channel blocks into b x b spatial
// tiles. DCR mode (the default) takes the block offset from the outer channel bits, CRD
// (opset 11) from the inner ones.
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class DepthToSpaceKernel final : public Kernel {
 public:
  DepthToSpaceKernel(int64_t block, bool crd) : block_(block), crd_(crd) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 4) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input must be 4-D [N,C,H,W], not shape " + shape_to_string(x->shape()));
    }
    const int64_t b = block_, n = x->shape()[0], c = x->shape()[1], h = x->shape()[2],
                  w = x->shape()[3];
    if (c % (b * b) != 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "channels " + std::to_string(c) +
                           " are not a multiple of blocksize^2 = " + std::to_string(b * b));
    }
    const int64_t oc = c / (b * b);
    int64_t oh = 0, ow = 0;
    if (__builtin_mul_overflow(h, b, &oh) || __builtin_mul_overflow(w, b, &ow)) {
      return ctx.error(ErrorCode::kOutOfRange, "the output of " + shape_to_string(x->shape()) +
                                                   " with blocksize " + std::to_string(b) +
                                                   " is too large");
    }
    // Seen as 6-D, the rearrangement is a transpose.
    Shape view;
    std::vector<int64_t> perm;
    if (crd_) {
      view = {n, oc, b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      view = {n, b, b, oc, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
    Shape moved;
    for (int64_t p : perm) moved.push_back(view[static_cast<size_t>(p)]);
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), {n, oc, oh, ow}));
    Tensor out6 = out->reshaped(moved);
    permute_copy(x->reshaped(view), out6, perm);
    return ok_status();
  }

 private:
  int64_t block_;
  bool crd_;
};

Result<std::unique_ptr<Kernel>> create_depth_to_space(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t block = attrs.require_int("blocksize");
  const std::string mode = attrs.get_string("mode", "DCR");
  RECUR_RETURN_IF_ERROR(attrs.status());
  // Beyond 2^31, b * b would overflow; no real model has such a block.
  if (block <= 0 || block > (int64_t{1} << 31)) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "blocksize " + std::to_string(block) + " must be in [1, 2^31]");
  }
  if (mode != "DCR" && mode != "CRD") {
    return ctx.error(ErrorCode::kInvalidModel, "mode must be DCR or CRD, not '" + mode + "'");
  }
  return std::make_unique<DepthToSpaceKernel>(block, mode == "CRD");
}

Status infer_depth_to_space(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  const int64_t b = AttrReader(ctx.node()).get_int("blocksize", 0);
  if (!in.shape || in.shape->size() != 4 || b <= 0 || b > (int64_t{1} << 31)) {
    ctx.set_output(0, type_with_rank(in.dtype, 4));
    return ok_status();
  }
  std::vector<Dim> out = *in.shape;
  out[1] = out[1].is_fixed() ? Dim{out[1].value / (b * b), {}} : Dim{};
  for (size_t d = 2; d < 4; ++d) {
    int64_t v = 0;
    out[d] = out[d].is_fixed() && !__builtin_mul_overflow(out[d].value, b, &v) ? Dim{v, {}} : Dim{};
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_depth_to_space(Registrar& r) {
  r.add({.op_type = "DepthToSpace", .since = 1, .create = create_depth_to_space},
        infer_depth_to_space);
}

}  // namespace recur::reference
