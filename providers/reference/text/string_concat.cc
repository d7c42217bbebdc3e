// StringConcat (opset 20): Y = X + Y elementwise on string tensors, with numpy broadcasting.
#include <string>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/util.h"
#include "providers/reference/text/text_ops.h"

namespace recur::reference {

namespace {

class StringConcatKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    for (const Tensor* t : {a, b}) {
      if (t->dtype() != DType::kString) {
        return ctx.error(ErrorCode::kInvalidArgument, "inputs must be string tensors, not " +
                                                          std::string(dtype_name(t->dtype())));
      }
    }
    Result<Shape> shape = broadcast_shapes({a->shape(), b->shape()});
    if (!shape.ok()) return ctx.error(ErrorCode::kInvalidArgument, shape.status().message());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kString, *shape));
    const std::string* pa = a->data<std::string>();
    const std::string* pb = b->data<std::string>();
    std::string* out = y->data<std::string>();
    for_each_broadcast<2>(
        *shape, {&a->shape(), &b->shape()},
        [&](int64_t i, const std::array<int64_t, 2>& off) { out[i] = pa[off[0]] + pb[off[1]]; });
    return ok_status();
  }
};

Status infer_string_concat(InferContext& ctx) {
  TypeInfo t;
  t.dtype = DType::kString;
  auto dims = broadcast_dims(ctx.input_type(0).shape, ctx.input_type(1).shape);
  if (!dims.ok()) return ctx.error(dims.status().message());
  t.shape = *dims;
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_string_concat(Registrar& r) {
  r.add({.op_type = "StringConcat",
         .since = 20,
         .create = make_simple<StringConcatKernel>(),
         .takes_strings = true},
        infer_string_concat);
}

}  // namespace recur::reference
