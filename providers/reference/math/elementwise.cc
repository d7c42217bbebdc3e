#include "providers/reference/math/elementwise.h"

#include <bit>

namespace recur::reference {

float round_to_odd_float(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(f) || static_cast<double>(f) == v) return f;
  // v lies strictly between two adjacent floats; keep the one with an odd significand.
  if ((std::bit_cast<uint32_t>(f) & 1u) == 0) {
    f = std::nextafter(f, v > static_cast<double>(f) ? std::numeric_limits<float>::infinity()
                                                     : -std::numeric_limits<float>::infinity());
  }
  return f;
}

Status unsupported_dtype(const KernelContext& ctx, DType t) {
  return ctx.error(ErrorCode::kNotImplemented,
                   "dtype " + std::string(dtype_name(t)) + " is not supported");
}

Status dtype_mismatch(const KernelContext& ctx, const char* what_a, DType a, const char* what_b,
                      DType b) {
  return ctx.error(ErrorCode::kInvalidArgument, std::string(what_a) + " is " +
                                                    std::string(dtype_name(a)) + " but " + what_b +
                                                    " is " + std::string(dtype_name(b)));
}

Status infer_bool_like_input0(InferContext& ctx) {
  TypeInfo t = ctx.input_type(0);
  t.dtype = DType::kBool;
  ctx.set_output(0, t);
  return ok_status();
}

Result<Shape> legacy_b_shape(const Node& node, const Shape& a, const Shape& b) {
  AttrReader attrs(node);
  const int64_t broadcast = attrs.get_int("broadcast", 0);
  const bool has_axis = attrs.has("axis");
  const int64_t axis_attr = attrs.get_int("axis", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (!broadcast) {
    if (a != b) {
      return invalid_argument("shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                              " differ and broadcast=0");
    }
    return b;
  }
  if (b.size() > a.size()) {
    return invalid_argument("B " + shape_to_string(b) + " has a higher rank than A " +
                            shape_to_string(a));
  }
  if (!has_axis) return b;
  const auto rank = static_cast<int64_t>(a.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  if (axis < 0 || axis + static_cast<int64_t>(b.size()) > rank) {
    return invalid_argument("axis " + std::to_string(axis_attr) + " cannot place B " +
                            shape_to_string(b) + " in A " + shape_to_string(a));
  }
  Shape out(a.size(), 1);
  for (size_t i = 0; i < b.size(); ++i) out[static_cast<size_t>(axis) + i] = b[i];
  return out;
}

Result<BinaryShapes> binary_shapes(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                                   bool legacy_attrs) {
  BinaryShapes s{a.shape(), b.shape(), {}};
  if (legacy_attrs && ctx.node().opset < 7) {
    auto lb = legacy_b_shape(ctx.node(), a.shape(), b.shape());
    if (!lb.ok()) return ctx.error(lb.status().code(), lb.status().message());
    s.b = std::move(lb).value();
  }
  auto out = broadcast_shapes({s.a, s.b});
  if (!out.ok()) return ctx.error(out.status().code(), out.status().message());
  s.out = std::move(out).value();
  if (legacy_attrs && ctx.node().opset < 7 && s.out != s.a) {
    return ctx.error(ErrorCode::kInvalidArgument, "B " + shape_to_string(b.shape()) +
                                                      " does not broadcast to A " +
                                                      shape_to_string(a.shape()));
  }
  return s;
}

InferFn infer_binary(DType out_dtype, bool legacy_attrs) {
  return [out_dtype, legacy_attrs](InferContext& ctx) -> Status {
    TypeInfo out;
    out.dtype = out_dtype == DType::kUndefined ? ctx.input_type(0).dtype : out_dtype;
    if (legacy_attrs && ctx.opset() < 7) {
      out.shape = ctx.input_type(0).shape;
    } else {
      auto dims = broadcast_dims(ctx.input_type(0).shape, ctx.input_type(1).shape);
      if (!dims.ok()) return ctx.error(dims.status().message());
      out.shape = *dims;
    }
    ctx.set_output(0, out);
    return ok_status();
  };
}

InferFn infer_broadcast_all(size_t dtype_input, int broadcast_since) {
  return [dtype_input, broadcast_since](InferContext& ctx) -> Status {
    TypeInfo out;
    out.dtype = ctx.input_type(dtype_input).dtype;
    if (ctx.num_inputs() == 0 || !ctx.has_input(0)) return ok_status();
    out.shape = ctx.input_type(0).shape;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      if (ctx.opset() < broadcast_since) {
        if (!out.shape) out.shape = ctx.input_type(i).shape;
        continue;
      }
      auto dims = broadcast_dims(out.shape, ctx.input_type(i).shape);
      if (!dims.ok()) return ctx.error(dims.status().message());
      out.shape = *dims;
    }
    ctx.set_output(0, out);
    return ok_status();
  };
}

}  // namespace recur::reference
