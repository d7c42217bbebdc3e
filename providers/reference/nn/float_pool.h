// The run shared by the pools whose output is a function of the taps' values alone (AveragePool,
// LpPool): Y allocated, the window plan kept by X's shape, and each output position computed in
// double from its window.
#pragma once

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/last_plan.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

// `value(sum_of, window)` gives a position's output as a double, where `sum_of(g)` is the sum
// over the window's taps of g(x), x each tap's value as a double. `plans` keeps the last
// shape's plan (the attributes are the kernel's, fixed).
template <class Value>
Status run_float_pool(KernelContext& ctx, const WindowAttrs& attrs,
                      const LastPlan<Shape, PoolPlan>& plans, Value&& value) {
  RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  RECUR_ASSIGN_OR_RETURN(PoolShapes s, resolve_pool(attrs, x->shape()));
  RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s.y));
  RECUR_ASSIGN_OR_RETURN(auto kept, plans.get(x->shape(), [&]() -> Result<PoolPlan> {
    return make_pool_plan(s.win);
  }));
  const PoolPlan& plan = *kept;
  const int64_t P = s.win.out_size();
  const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* yp = y->data<T>();
    for_each_pool_window(
        s, plan, x->data<T>(), [&](const T* xc, const PoolWindow& w, int64_t nc, int64_t p) {
          const auto sum_of = [&](auto&& g) {
            double sum = 0;
            w.for_each_tap([&](int64_t off) {
              sum += g(static_cast<double>(static_cast<compute_t<T>>(xc[off])));
            });
            return sum;
          };
          yp[nc * P + p] = static_cast<T>(static_cast<compute_t<T>>(value(sum_of, w)));
        });
  });
  if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
  return ok_status();
}

}  // namespace recur::reference
