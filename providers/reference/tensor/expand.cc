// Expand: broadcasts the input to the shape given by input 1, numpy-style in both directions
// (a 1 in the shape keeps the input's dimension).
#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class ExpandKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1));
    if (s->rank() != 1) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "shape must be 1-D, not " + shape_to_string(s->shape()));
    }
    auto shape = read_int_values(*s, "shape");
    if (!shape.ok()) return shape.status().with_context(ctx.node().describe());
    for (int64_t d : *shape) {
      if (d < 0) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "shape " + ints_to_string(*shape) + " has a negative dimension");
      }
    }
    auto out_shape = broadcast_shapes({x->shape(), *shape});
    if (!out_shape.ok()) return out_shape.status().with_context(ctx.node().describe());
    if (*out_shape == x->shape()) return ctx.set_output(0, *x);
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, x->dtype(), *out_shape));
    strided_copy(x->raw_data(), out->raw_data(), dtype_size(x->dtype()), *out_shape,
                 broadcast_strides(x->shape(), *out_shape), 0);
    return ok_status();
  }
};

Status infer_expand(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (auto shape = constant_ints(ctx, 1)) {
    std::vector<Dim> target;
    for (int64_t d : *shape) {
      if (d < 0) return ctx.error("shape " + ints_to_string(*shape) + " has a negative dimension");
      target.push_back(Dim{d, {}});
    }
    auto dims = broadcast_dims(in.shape, target);
    if (!dims.ok()) return ctx.error(dims.status().message());
    if (auto fixed = fixed_shape(*dims)) {
      auto n = checked_numel(*fixed, in.dtype);
      if (!n.ok()) return ctx.error(n.status().message());
    }
    ctx.set_output(0, TypeInfo{in.dtype, *dims});
    return ok_status();
  }
  ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
  return ok_status();
}

}  // namespace

void register_expand(Registrar& r) {
  r.add({.op_type = "Expand", .since = 8, .create = make_simple<ExpandKernel>()}, infer_expand);
}

}  // namespace recur::reference
