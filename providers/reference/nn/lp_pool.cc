// LpPool (opsets 1, 2, 11, 18, 22; ceil_mode and dilations from 18): (sum over the window of
// |x|^p)^(1/p); padding contributes 0.
#include <cmath>

#include "providers/reference/nn/float_pool.h"
#include "providers/reference/nn/nn_ops.h"

namespace recur::reference {

namespace {

class LpPoolKernel final : public Kernel {
 public:
  LpPoolKernel(WindowAttrs a, double p) : a_(std::move(a)), p_(p) {}

  Status run(KernelContext& ctx) const override {
    return run_float_pool(ctx, a_, plan_, [&](auto&& sum_of, const PoolWindow&) {
      return std::pow(sum_of([&](double v) { return std::pow(std::fabs(v), p_); }), 1.0 / p_);
    });
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
