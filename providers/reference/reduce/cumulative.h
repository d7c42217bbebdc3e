// The scan shared by CumSum and CumProd: along the axis given by a scalar int32/int64 input,
// with `exclusive` (each output leaves out its own element) and `reverse` (the scan runs from
// the end). Floats accumulate in double; integers wrap.
#pragma once

#include <type_traits>

#include "providers/reference/common/util.h"
#include "providers/reference/math/elementwise.h"
#include "providers/reference/reduce/reduce.h"

namespace recur::reference {

// Op supplies kTypes (the accepted storage types), kIdentity (the empty scan's value, as an
// int) and `template <class A> static A combine(A acc, A v)`, applied to double for floats and
// to uint64_t for integers: uint64 wraps modulo 2^64, whose low bits are the wrapped result of
// both + and * in any narrower (signed or unsigned) T.
template <class Op>
class CumulativeKernel final : public Kernel {
 public:
  CumulativeKernel(bool exclusive, bool reverse) : exclusive_(exclusive), reverse_(reverse) {}

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
    // Checked before allocating, so an unsupported dtype leaves no output behind.
    if (!visit_dtype(Op::kTypes, x->dtype(), [](auto) {})) {
      return unsupported_dtype(ctx, x->dtype());
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
    visit_dtype(Op::kTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
      const T* px = x->data<T>();
      T* py = y->data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          A acc = static_cast<A>(Op::kIdentity);
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
              acc = Op::combine(acc, v);
            } else {
              acc = Op::combine(acc, v);
              py[idx] = convert<T>(acc);
            }
          }
        }
      }
    });
    return ok_status();
  }

 private:
  bool exclusive_;
  bool reverse_;
};

// CumSum's and CumProd's factory: reads exclusive and reverse.
template <class Op>
KernelFactory make_cumulative() {
  return [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
    AttrReader attrs(c.node());
    const bool exclusive = attrs.get_int("exclusive", 0) != 0;
    const bool reverse = attrs.get_int("reverse", 0) != 0;
    RECUR_RETURN_IF_ERROR(attrs.status());
    return std::make_unique<CumulativeKernel<Op>>(exclusive, reverse);
  };
}

}  // namespace recur::reference
