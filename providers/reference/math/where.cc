// Where: condition ? X : Y, the three broadcast together.
#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

class WhereKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* c, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* y, required_input(ctx, 2));
    if (c->dtype() != DType::kBool) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "condition must be bool, not " + std::string(dtype_name(c->dtype())));
    }
    if (x->dtype() != y->dtype()) return dtype_mismatch(ctx, "X", x->dtype(), "Y", y->dtype());
    auto shape = broadcast_shapes({c->shape(), x->shape(), y->shape()});
    if (!shape.ok()) return ctx.error(shape.status().code(), shape.status().message());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), *shape));
    const bool handled = visit_dtype(kAllTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const bool* pc = c->data<bool>();
      const T* px = x->data<T>();
      const T* py = y->data<T>();
      T* po = out->data<T>();
      for_each_broadcast<3>(*shape, {&c->shape(), &x->shape(), &y->shape()},
                            [&](int64_t i, const std::array<int64_t, 3>& off) {
                              po[i] = pc[off[0]] ? px[off[1]] : py[off[2]];
                            });
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }
};

}  // namespace

void register_where(Registrar& r) {
  r.add({.op_type = "Where", .since = 9, .create = make_simple<WhereKernel>()},
        infer_broadcast_all(1, 0));
}

}  // namespace recur::reference
