// CumSum along the axis given by a scalar int32/int64 input, with `exclusive` (each output
// leaves out its own element) and `reverse` (sums run from the end). Floats accumulate in
// double; integers wrap.
#include <cmath>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/reduce/reduce.h"

namespace recur::reference {

namespace {

class CumSumKernel final : public Kernel {
 public:
  CumSumKernel(bool exclusive, bool reverse) : exclusive_(exclusive), reverse_(reverse) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* axis_t, required_input(ctx, 1));
    auto axis_v = read_int_values(*axis_t, "axis");
    if (!axis_v.ok()) return ctx.error(axis_v.status().code(), axis_v.status().message());
    if (axis_v->size() != 1) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "axis must be a scalar, not " + shape_to_string(axis_t->shape()));
    }
    auto axis = normalize_axis((*axis_v)[0], x->rank(), "axis");
    if (!axis.ok()) return ctx.error(axis.status().code(), axis.status().message());
    const Shape& shape = x->shape();
    int64_t outer = 1, inner = 1;
    const int64_t n = shape[static_cast<size_t>(*axis)];
    for (int64_t d = 0; d < x->rank(); ++d) {
      if (d < *axis) outer *= shape[static_cast<size_t>(d)];
      if (d > *axis) inner *= shape[static_cast<size_t>(d)];
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
    const bool handled = visit_dtype(kNumericTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // uint64 for integers: wraps modulo 2^64, whose low bits are the wrapped result in T.
      using A = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
      const T* px = x->data<T>();
      T* py = y->data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          A acc = 0;
          for (int64_t j = 0; j < n; ++j) {
            const int64_t k = reverse_ ? n - 1 - j : j;
            const int64_t idx = (o * n + k) * inner + i;
            A v;
            if constexpr (std::is_integral_v<T>) {
              v = static_cast<A>(
                  static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(px[idx]));
            } else {
              v = static_cast<double>(to_compute(px[idx]));
            }
            if (exclusive_) {
              py[idx] = convert<T>(acc);
              acc += v;
            } else {
              acc += v;
              py[idx] = convert<T>(acc);
            }
          }
        }
      }
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }

 private:
  bool exclusive_;
  bool reverse_;
};

}  // namespace

void register_cum_sum(Registrar& r) {
  r.add({.op_type = "CumSum",
         .since = 11,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const bool exclusive = attrs.get_int("exclusive", 0) != 0;
           const bool reverse = attrs.get_int("reverse", 0) != 0;
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<CumSumKernel>(exclusive, reverse);
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
