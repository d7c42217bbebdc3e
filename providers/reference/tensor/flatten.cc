// Flatten: [d0..dn) -> [prod(d0..d(axis-1)), prod(d(axis)..dn)]. A view.
#include <limits>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

// axis may be rank itself (everything in the first dimension); negative from opset 11.
Result<int64_t> flatten_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis > rank) {
    return out_of_range("axis " + std::to_string(axis) + " is out of range for rank " +
                        std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

class FlattenKernel final : public Kernel {
 public:
  explicit FlattenKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    auto axis = flatten_axis(axis_, x->rank());
    if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
    const auto ax = static_cast<size_t>(*axis);
    const int64_t outer = dims_product(x->shape(), 0, ax);
    const int64_t inner = dims_product(x->shape(), ax, x->shape().size());
    // An empty tensor's other dimensions may multiply past int64; then there is no shape.
    if (x->numel() == 0 && (outer == std::numeric_limits<int64_t>::max() ||
                            inner == std::numeric_limits<int64_t>::max())) {
      return ctx.error(ErrorCode::kOutOfRange,
                       "the flattened shape of " + shape_to_string(x->shape()) + " overflows");
    }
    return ctx.set_output(0, x->reshaped({outer, inner}));
  }

 private:
  int64_t axis_;
};

Result<std::unique_ptr<Kernel>> create_flatten(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", 1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<FlattenKernel>(axis);
}

Status infer_flatten(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  std::vector<Dim> out(2);
  if (in.shape) {
    const auto rank = static_cast<int64_t>(in.shape->size());
    auto axis = flatten_axis(AttrReader(ctx.node()).get_int("axis", 1), rank);
    if (!axis.ok()) return ctx.error(axis.status().message());
    int64_t prod[2] = {1, 1};
    bool fixed[2] = {true, true};
    for (int64_t i = 0; i < rank; ++i) {
      const int k = i < *axis ? 0 : 1;
      const Dim& d = (*in.shape)[static_cast<size_t>(i)];
      fixed[k] = fixed[k] && d.is_fixed() && !__builtin_mul_overflow(prod[k], d.value, &prod[k]);
    }
    for (int k = 0; k < 2; ++k)
      if (fixed[k]) out[static_cast<size_t>(k)] = Dim{prod[k], {}};
    // A single symbolic factor carries over: [batch,3,4] with axis 1 -> [batch,12].
    if (*axis == 1 && !(*in.shape)[0].is_fixed()) out[0] = (*in.shape)[0];
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_flatten(Registrar& r) {
  r.add({.op_type = "Flatten", .since = 1, .create = create_flatten}, infer_flatten);
}

}  // namespace recur::reference
