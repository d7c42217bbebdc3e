#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

namespace {

// An optional holding the input, or an empty one (of the `type` attribute) without it.
class OptionalKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    return ctx.set_output(0, x ? *x : Tensor::none());
  }
};

Result<std::unique_ptr<Kernel>> create_optional(CompileContext& ctx) {
  const Attribute* type = ctx.node().attr("type");
  if (!ctx.has_input(0) && (!type || type->type != AttrType::kType)) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "an Optional without an input needs the 'type' attribute");
  }
  return std::make_unique<OptionalKernel>();
}

Status infer_optional(InferContext& ctx) {
  TypeInfo t = ctx.input_type(0);
  if (!ctx.has_input(0)) {
    const Attribute* type = ctx.node().attr("type");
    if (type && type->type_info) t = *type->type_info;
  }
  t.optional = true;
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_optional(Registrar& r) {
  r.add({.op_type = "Optional",
         .since = 15,
         .create = create_optional,
         .takes_strings = true,
         .takes_sequences = true,
         .takes_optionals = true},
        infer_optional);
}

}  // namespace recur::reference
