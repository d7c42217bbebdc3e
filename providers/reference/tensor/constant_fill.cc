// ConstantFill, an experimental ONNX operator that PyTorch still writes for zero initial states
// at opsets 7 and 8 (ONNX Runtime no longer loads it): a tensor of the `dtype` attribute (float
// by default) filled with the `value` attribute (0 by default). Its shape is the `shape`
// attribute without an input; with one, the input's shape, or its values when input_as_shape=1,
// followed by `extra_shape`.
#include <cstring>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/math/elementwise.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

struct FillAttrs {
  Tensor value;  // one element of the output's dtype
  std::vector<int64_t> shape, extra_shape;
  bool input_as_shape = false;
};

Result<FillAttrs> read_attrs(const Node& node) {
  AttrReader attrs(node);
  FillAttrs a;
  const int64_t code = attrs.get_int("dtype", static_cast<int64_t>(DType::kFloat32));
  const float value = attrs.get_float("value", 0.0f);
  a.shape = attrs.get_ints("shape");
  a.extra_shape = attrs.get_ints("extra_shape");
  a.input_as_shape = attrs.get_int("input_as_shape", 0) != 0;
  RECUR_RETURN_IF_ERROR(attrs.status());
  const bool has_input = node.has_input(0);
  if (has_input && attrs.has("shape")) {
    return invalid_model("the shape attribute cannot be set with an input");
  }
  if (!has_input && (a.input_as_shape || attrs.has("extra_shape"))) {
    return invalid_model("input_as_shape and extra_shape need the input they apply to");
  }
  for (int64_t d : a.shape) {
    if (d < 0) return invalid_model("shape " + ints_to_string(a.shape) + " is negative");
  }
  for (int64_t d : a.extra_shape) {
    if (d < 0)
      return invalid_model("extra_shape " + ints_to_string(a.extra_shape) + " is negative");
  }
  const auto t = static_cast<DType>(code);
  bool ok = false;
  if (code > 0 && t != DType::kString && dtype_size(t) > 0) {
    a.value = Tensor::empty(t, {});
    ok = visit_dtype(kAllTypes, t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      a.value.data<T>()[0] = convert<T, float>(value);
    });
  }
  if (!ok) {
    return invalid_model("dtype " + std::to_string(code) + " is not a numeric or bool type");
  }
  return a;
}

// The output's shape from the input (its shape, or its values with input_as_shape).
Result<Shape> shape_from_input(const FillAttrs& a, const Tensor& in) {
  Shape s;
  if (a.input_as_shape) {
    if (in.rank() != 1 || (in.dtype() != DType::kInt64 && in.dtype() != DType::kInt32)) {
      return invalid_argument(
          "with input_as_shape the input must be a 1-D int32 or int64 "
          "shape, not " +
          std::string(dtype_name(in.dtype())) + shape_to_string(in.shape()));
    }
    RECUR_ASSIGN_OR_RETURN(s, read_int_values(in, "shape"));
    for (int64_t d : s) {
      if (d < 0) return invalid_argument("the shape input " + shape_to_string(s) + " is negative");
    }
  } else {
    s = in.shape();
  }
  for (int64_t d : a.extra_shape) s.push_back(d);
  return s;
}

class ConstantFillKernel final : public Kernel {
 public:
  explicit ConstantFillKernel(FillAttrs a) : a_(std::move(a)) {}

  Status run(KernelContext& ctx) const override {
    Shape shape(a_.shape.begin(), a_.shape.end());
    if (const Tensor* in = ctx.input(0)) {
      auto s = shape_from_input(a_, *in);
      if (!s.ok()) return s.status().with_context(ctx.node().describe());
      shape = *s;
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, a_.value.dtype(), shape));
    fill_elements(*out, a_.value);
    return ok_status();
  }

 private:
  FillAttrs a_;
};

Result<std::unique_ptr<Kernel>> create_constant_fill(CompileContext& ctx) {
  auto a = read_attrs(ctx.node());
  if (!a.ok()) return a.status().with_context(ctx.node().describe());
  return std::make_unique<ConstantFillKernel>(std::move(a).value());
}

// A static output shape, refused at load where its size overflows or exceeds memory (as
// ConstantOfShape's), since the memory plan sizes buffers by static shapes.
Status set_static(InferContext& ctx, DType dt, const Shape& shape) {
  auto n = checked_numel(shape, dt);
  if (!n.ok()) return ctx.error(n.status().message());
  ctx.set_output(0, TypeInfo::of(dt, shape));
  return ok_status();
}

Status infer_constant_fill(InferContext& ctx) {
  auto a = read_attrs(ctx.node());
  if (!a.ok()) return ctx.error(a.status().message());
  const DType dt = a->value.dtype();
  if (!ctx.node().has_input(0)) return set_static(ctx, dt, Shape(a->shape.begin(), a->shape.end()));
  const TypeInfo& in = ctx.input_type(0);
  std::vector<Dim> dims;
  if (!a->input_as_shape) {
    if (!in.shape) {
      ctx.set_output(0, TypeInfo{dt, std::nullopt});
      return ok_status();
    }
    dims = *in.shape;
  } else if (const Tensor* v = ctx.input_value(0)) {
    auto s = shape_from_input(*a, *v);
    if (!s.ok()) return ctx.error(s.status().message());
    return set_static(ctx, dt, *s);
  } else if (in.shape && in.shape->size() == 1 && (*in.shape)[0].is_fixed()) {
    dims = unknown_dims(static_cast<size_t>((*in.shape)[0].value));
  } else {
    ctx.set_output(0, TypeInfo{dt, std::nullopt});
    return ok_status();
  }
  for (int64_t d : a->extra_shape) dims.push_back(Dim{d});
  if (std::optional<Shape> fixed = fixed_shape(dims)) return set_static(ctx, dt, *fixed);
  ctx.set_output(0, type_with_dims(dt, std::move(dims)));
  return ok_status();
}

}  // namespace

void register_constant_fill(Registrar& r) {
  r.add({.op_type = "ConstantFill", .since = 1, .create = create_constant_fill},
        infer_constant_fill);
}

}  // namespace recur::reference
