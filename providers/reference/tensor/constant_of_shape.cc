// ConstantOfShape: a tensor of the shape given by input 0, filled with the one element of the
// `value` attribute (float32 0 by default).
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

Result<Tensor> fill_value(const Node& node) {
  AttrReader attrs(node);
  const Tensor* v = attrs.get_tensor("value");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (!v) return Tensor::from_vector<float>({1}, {0.0f});
  if (v->numel() != 1) {
    return invalid_model(node.describe() + ": attribute value must have one element, not shape " +
                         shape_to_string(v->shape()));
  }
  return *v;
}

Result<Shape> read_shape(const Tensor& t) {
  if (t.rank() != 1) {
    return invalid_argument("the shape input must be 1-D, not " + shape_to_string(t.shape()));
  }
  if (t.dtype() != DType::kInt64) {
    return invalid_argument("the shape input must be int64, not " +
                            std::string(dtype_name(t.dtype())));
  }
  return read_int_values(t, "shape");
}

class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(Tensor value) : value_(std::move(value)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 0));
    auto shape = read_shape(*s);
    if (!shape.ok()) return shape.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, value_.dtype(), *shape));
    fill_elements(*out, value_);
    return ok_status();
  }

 private:
  Tensor value_;
};

Result<std::unique_ptr<Kernel>> create_constant_of_shape(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx.node()));
  return std::make_unique<ConstantOfShapeKernel>(std::move(value));
}

Status infer_constant_of_shape(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx.node()));
  if (const Tensor* s = ctx.input_value(0)) {
    auto shape = read_shape(*s);
    if (!shape.ok()) return ctx.error(shape.status().message());
    auto n = checked_numel(*shape, value.dtype());
    if (!n.ok()) return ctx.error(n.status().message());
    ctx.set_output(0, TypeInfo::of(value.dtype(), *shape));
    return ok_status();
  }
  const TypeInfo& st = ctx.input_type(0);
  if (st.shape && st.shape->size() == 1 && (*st.shape)[0].is_fixed()) {
    ctx.set_output(0, type_with_rank(value.dtype(), static_cast<size_t>((*st.shape)[0].value)));
  } else {
    ctx.set_output(0, TypeInfo{value.dtype(), std::nullopt});
  }
  return ok_status();
}

}  // namespace

void register_constant_of_shape(Registrar& r) {
  r.add({.op_type = "ConstantOfShape", .since = 9, .create = create_constant_of_shape},
        infer_constant_of_shape);
}

}  // namespace recur::reference
