// LpPool (opsets 1, 2, 11, 18, 22; ceil_mode and dilations from 18): (sum over the window of
// |x|^p)^(1/p); padding contributes 0.
#include <cmath>

#include "providers/reference/common/last_plan.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class LpPoolKernel final : public Kernel {
 public:
  LpPoolKernel(WindowAttrs a, double p) : a_(std::move(a)), p_(p) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(PoolShapes s, resolve_pool(a_, x->shape()));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s.y));
    RECUR_ASSIGN_OR_RETURN(auto kept, plan_.get(x->shape(), [&]() -> Result<PoolPlan> {
      return make_pool_plan(s.win);
    }));
    const PoolPlan& plan = *kept;
    const int64_t P = s.win.out_size();
    const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* yp = y->data<T>();
      for_each_pool_window(
          s, plan, x->data<T>(), [&](const T* xc, const PoolWindow& w, int64_t nc, int64_t p) {
            double sum = 0;
            w.for_each_tap([&](int64_t off) {
              const double v = static_cast<double>(static_cast<compute_t<T>>(xc[off]));
              sum += std::pow(std::fabs(v), p_);
            });
            yp[nc * P + p] = static_cast<T>(static_cast<compute_t<T>>(std::pow(sum, 1.0 / p_)));
          });
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  WindowAttrs a_;
  double p_;
  LastPlan<Shape, PoolPlan> plan_;  // by the input's shape (the attributes are fixed)
};

}  // namespace

// The exponent: a float attribute in opset 1, an int from opset 2.
Result<double> read_lp_exponent(const Node& node) {
  AttrReader r(node);
  double p = 2.0;
  const Attribute* attr = node.attr("p");
  if (attr && attr->type == AttrType::kFloat) {
    p = r.get_float("p", 2.0f);
  } else {
    p = static_cast<double>(r.get_int("p", 2));
  }
  RECUR_RETURN_IF_ERROR(r.status());
  if (!(p > 0) || !std::isfinite(p)) {
    return invalid_model(node.describe() + ": p must be positive");
  }
  return p;
}

void register_lp_pool(Registrar& r) {
  r.add({.op_type = "LpPool",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(ctx.node()));
           RECUR_ASSIGN_OR_RETURN(double p, read_lp_exponent(ctx.node()));
           if (a.kernel_shape.empty()) {
             return ctx.error(ErrorCode::kInvalidModel, "kernel_shape is required");
           }
           return std::make_unique<LpPoolKernel>(std::move(a), p);
         }},
        infer_pool);
}

}  // namespace recur::reference
