// Tile: repeats the input `repeats[d]` times along each dimension d. Opset 1 instead takes a
// single count (`tiles`) and the `axis` to repeat along, both as inputs.
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

Result<Shape> tiled_shape(const Shape& in, const std::vector<int64_t>& repeats) {
  if (repeats.size() != in.size()) {
    return invalid_argument("repeats " + ints_to_string(repeats) + " has " +
                            std::to_string(repeats.size()) + " entries for an input of rank " +
                            std::to_string(in.size()));
  }
  Shape out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) {
      return invalid_argument("repeats " + ints_to_string(repeats) + " has a negative count");
    }
    if (__builtin_mul_overflow(in[d], repeats[d], &out[d])) {
      return out_of_range("repeating dimension " + std::to_string(in[d]) + " " +
                          std::to_string(repeats[d]) + " times overflows");
    }
  }
  return out;
}

class TileKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* r, required_input(ctx, 1));
    std::vector<int64_t> repeats;
    if (ctx.node().opset < 6) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 2));
      auto tiles = read_scalar_int(*r, "tiles");
      if (!tiles.ok()) return tiles.status().with_context(ctx.node().describe());
      auto axis_v = read_scalar_int(*a, "axis");
      if (!axis_v.ok()) return axis_v.status().with_context(ctx.node().describe());
      auto axis = normalize_axis(*axis_v, x->rank(), "axis");
      if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
      repeats.assign(static_cast<size_t>(x->rank()), 1);
      repeats[static_cast<size_t>(*axis)] = *tiles;
    } else {
      if (r->rank() != 1) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "repeats must be 1-D, not " + shape_to_string(r->shape()));
      }
      auto v = read_int_values(*r, "repeats");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      repeats = std::move(v).value();
    }
    auto out_shape = tiled_shape(x->shape(), repeats);
    if (!out_shape.ok()) return out_shape.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, x->dtype(), *out_shape));
    if (out->numel() == 0) return ok_status();
    // The output is the input broadcast to [r0, d0, r1, d1, ...] with zero strides along the
    // repeat dimensions; that shape's row-major order is exactly the output's.
    const Shape in_strides = contiguous_strides(x->shape());
    Shape view;
    std::vector<int64_t> strides;
    for (size_t d = 0; d < x->shape().size(); ++d) {
      view.push_back(repeats[d]);
      strides.push_back(0);
      view.push_back(x->shape()[d]);
      strides.push_back(in_strides[d]);
    }
    strided_copy(x->raw_data(), out->raw_data(), dtype_size(x->dtype()), view, strides, 0);
    return ok_status();
  }
};

Status infer_tile(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    return ok_status();
  }
  std::vector<Dim> out = unknown_dims(in.shape->size());
  if (ctx.opset() >= 6) {
    if (auto repeats = constant_ints(ctx, 1)) {
      if (repeats->size() != in.shape->size()) {
        return ctx.error("repeats " + ints_to_string(*repeats) + " has " +
                         std::to_string(repeats->size()) + " entries for an input of rank " +
                         std::to_string(in.shape->size()));
      }
      for (size_t d = 0; d < out.size(); ++d) {
        const Dim& x = (*in.shape)[d];
        const int64_t r = (*repeats)[d];
        if (r < 0)
          return ctx.error("repeats " + ints_to_string(*repeats) + " has a negative count");
        if (r == 1) {
          out[d] = x;
        } else if (x.is_fixed() && !__builtin_mul_overflow(x.value, r, &out[d].value)) {
          out[d].symbol.clear();
        } else if (r == 0) {
          out[d] = Dim{0, {}};
        } else {
          out[d] = Dim{};
        }
      }
      if (auto fixed = fixed_shape(out)) {
        auto n = checked_numel(*fixed, in.dtype);
        if (!n.ok()) return ctx.error(n.status().message());
      }
    }
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_tile(Registrar& r) {
  r.add({.op_type = "Tile", .since = 1, .create = make_simple<TileKernel>()}, infer_tile);
}

}  // namespace recur::reference
