// Building blocks shared by the elementwise kernels of math/: value conversions with a defined
// result for every input, NaN-propagating min/max, the unary kernel template, broadcasting
// binary loops (with the pre-opset-7 `broadcast`/`axis` rule) and their shape rules.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/registrar.h"
#include "providers/reference/common/util.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <class T>
inline constexpr bool is_float_like_v = std::is_floating_point_v<T> || is_half_v<T>;

// --- Conversions -------------------------------------------------------------------------

// double -> binary16 / bfloat16 with a single rounding: round to odd into float first, so that
// the final round to nearest even cannot double-round.
float round_to_odd_float(double v);

// A floating value to an integer type, defined for every input: truncation toward zero, taken
// modulo 2^bits when it fits in int64 (as numpy does on x86 for in-range values), saturated
// beyond that, and 0 for NaN.
template <class To, class C>
To float_to_int(C x) {
  if (std::isnan(x)) return To{0};
  const C t = std::trunc(x);
  const C lo = static_cast<C>(-9223372036854775808.0);  // -2^63, exact in float and double
  const C hi = static_cast<C>(9223372036854775808.0);   // 2^63
  if (t >= lo && t < hi) return static_cast<To>(static_cast<int64_t>(t));
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (t >= 0 && t < static_cast<C>(18446744073709551616.0)) return static_cast<uint64_t>(t);
  }
  return t > 0 ? std::numeric_limits<To>::max() : std::numeric_limits<To>::lowest();
}

// Converts one value between any two of the supported element types (Cast's semantics):
// integers wrap, floats to integers as float_to_int, anything to bool is `!= 0` (NaN is true).
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return to_compute(v) != compute_t<From>(0);
  } else if constexpr (is_float_like_v<From>) {
    const compute_t<From> x = to_compute(v);
    if constexpr (is_half_v<To>) {
      if constexpr (std::is_same_v<From, double>) return To(round_to_odd_float(x));
      return To(static_cast<float>(x));
    } else if constexpr (std::is_floating_point_v<To>) {
      return static_cast<To>(x);
    } else {
      return float_to_int<To>(x);
    }
  } else if constexpr (is_half_v<To>) {  // integer or bool to a 16-bit float
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);  // integer conversions are modular in C++20
  }
}

// --- Arithmetic helpers ------------------------------------------------------------------

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return std::isnan(to_compute(v));
  }
}

// numpy's maximum/minimum: a NaN in either operand gives NaN.
template <class C>
C nan_max(C a, C b) {
  if constexpr (!std::is_integral_v<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? b : a;
}
template <class C>
C nan_min(C a, C b) {
  if constexpr (!std::is_integral_v<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

// Two's complement arithmetic without undefined behaviour on signed overflow.
template <class T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // Promote to at least unsigned int so that uint16 * uint16 cannot overflow a signed int.
  using P = std::common_type_t<U, unsigned int>;
  return static_cast<T>(static_cast<U>(static_cast<P>(static_cast<U>(a)) * static_cast<U>(b)));
}
template <class T>
T wrap_neg(T a) {
  return wrap_sub(T{0}, a);
}

// --- Errors ------------------------------------------------------------------------------

Status unsupported_dtype(const KernelContext& ctx, DType t);
Status dtype_mismatch(const KernelContext& ctx, const char* what_a, DType a, const char* what_b,
                      DType b);

// --- Unary kernels -----------------------------------------------------------------------

// Op describes one elementwise function:
//   static constexpr auto kTypes        the storage types it accepts (a TypeList)
//   static constexpr bool kBoolOut      whether the output is bool (IsNaN, IsInf)
//   R operator()(C x) const             on the compute type C (float for the 16-bit floats)
//   static Result<Op> make(const Node&) optional: reads the attributes at compile time
template <class Op>
class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(Op op) : op_(std::move(op)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const DType out_dtype = Op::kBoolOut ? DType::kBool : x->dtype();
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dtype, x->shape()));
    const bool handled = visit_dtype(Op::kTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using R = std::conditional_t<Op::kBoolOut, bool, T>;
      const T* px = x->data<T>();
      R* py = y->data<R>();
      const int64_t n = x->numel();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (Op::kBoolOut) {
          py[i] = op_(to_compute(px[i]));
        } else {
          py[i] = from_compute<T>(op_(to_compute(px[i])));
        }
      }
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }

 private:
  Op op_;
};

Status infer_bool_like_input0(InferContext& ctx);

template <class Op>
void add_unary(Registrar& r, const char* name, int since) {
  r.add({.op_type = name,
         .since = since,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           if constexpr (requires(const Node& n) { Op::make(n); }) {
             RECUR_ASSIGN_OR_RETURN(Op op, Op::make(c.node()));
             return std::make_unique<UnaryKernel<Op>>(std::move(op));
           } else {
             return std::make_unique<UnaryKernel<Op>>(Op{});
           }
         }},
        Op::kBoolOut ? InferFn(infer_bool_like_input0) : InferFn(infer_same_as_input0));
}

// --- Binary kernels ----------------------------------------------------------------------

// Before opset 7, B broadcasts to A only when broadcast=1, aligned at `axis` (default:
// trailing). Returns B's shape padded with 1s so that numpy broadcasting gives that result.
Result<Shape> legacy_b_shape(const Node& node, const Shape& a, const Shape& b);

// The shapes of A and B as broadcasting should see them, and the output shape: numpy rules
// from opset 7 (and for every operator without the legacy attributes), legacy_b_shape before.
struct BinaryShapes {
  Shape a, b, out;
};
Result<BinaryShapes> binary_shapes(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                                   bool legacy_attrs);

// out[i] = f(a[..], b[..]) over the broadcast of a and b.
template <class TA, class TB, class TO, class F>
void broadcast_binary(const Tensor& a, const Tensor& b, Tensor& out, const BinaryShapes& s, F&& f) {
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* po = out.data<TO>();
  if (s.a == s.out && s.b == s.out) {
    // No broadcasting: one flat loop the compiler can vectorize (the output is a buffer of its
    // own, never an input's).
    const int64_t n = shape_numel(s.out);
    const TA* __restrict xa = pa;
    const TB* __restrict xb = pb;
    TO* __restrict xo = po;
    for (int64_t i = 0; i < n; ++i) xo[i] = f(xa[i], xb[i]);
    return;
  }
  // Row by row, each input contiguous or fixed along the row (a per-channel scale, a bias), so
  // that every inner loop is one the compiler can vectorize.
  for_each_broadcast_row<2>(s.out, {&s.a, &s.b},
                            [&](int64_t i, const std::array<int64_t, 2>& off,
                                const std::array<int64_t, 2>& step, int64_t n) {
                              const TA* __restrict xa = pa + off[0];
                              const TB* __restrict xb = pb + off[1];
                              TO* __restrict xo = po + i;
                              if (step[0] == 1 && step[1] == 1) {
                                for (int64_t j = 0; j < n; ++j) xo[j] = f(xa[j], xb[j]);
                              } else if (step[0] == 1 && step[1] == 0) {
                                const TB vb = *xb;
                                for (int64_t j = 0; j < n; ++j) xo[j] = f(xa[j], vb);
                              } else if (step[0] == 0 && step[1] == 1) {
                                const TA va = *xa;
                                for (int64_t j = 0; j < n; ++j) xo[j] = f(va, xb[j]);
                              } else {
                                for (int64_t j = 0; j < n; ++j)
                                  xo[j] = f(xa[j * step[0]], xb[j * step[1]]);
                              }
                            });
}

// Op describes one broadcasting function of two inputs of the same dtype:
//   static constexpr auto kTypes        the storage types it accepts
//   static constexpr bool kBoolOut      whether the output is bool (comparisons)
//   static constexpr bool kLegacyAttrs  whether opsets < 7 have `broadcast`/`axis`
//   R operator()(C a, C b, bool& ok)    on the compute type; clears ok for an input without a
//                                       defined result (an integer division by zero)
//   static const char* error()          what a cleared ok means
//   static Result<Op> make(const Node&) optional
template <class Op>
class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(Op op) : op_(std::move(op)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    if (a->dtype() != b->dtype()) return dtype_mismatch(ctx, "A", a->dtype(), "B", b->dtype());
    RECUR_ASSIGN_OR_RETURN(BinaryShapes s, binary_shapes(ctx, *a, *b, Op::kLegacyAttrs));
    const DType out_dtype = Op::kBoolOut ? DType::kBool : a->dtype();
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, out_dtype, s.out));
    bool ok = true;
    const bool handled = visit_dtype(Op::kTypes, a->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using R = std::conditional_t<Op::kBoolOut, bool, T>;
      broadcast_binary<T, T, R>(*a, *b, *out, s, [&](T x, T y) -> R {
        if constexpr (Op::kBoolOut) {
          return op_(to_compute(x), to_compute(y), ok);
        } else {
          return from_compute<T>(op_(to_compute(x), to_compute(y), ok));
        }
      });
    });
    if (!handled) return unsupported_dtype(ctx, a->dtype());
    if (!ok) return ctx.error(ErrorCode::kInvalidArgument, Op::error());
    return ok_status();
  }

 private:
  Op op_;
};

// Shape rule of a two-input broadcasting operator. `out` kUndefined: input 0's dtype.
// `legacy_attrs`: before opset 7 the output has A's shape.
InferFn infer_binary(DType out, bool legacy_attrs);

// Shape rule of an operator whose inputs all broadcast together (Where, Min, Max, ...).
// `dtype_input` gives the output dtype.
InferFn infer_broadcast_all(size_t dtype_input, int broadcast_since);

// `takes_strings`: Op::kTypes includes std::string (Equal from opset 19).
template <class Op>
void add_binary(Registrar& r, const char* name, int since, bool takes_strings = false) {
  r.add({.op_type = name,
         .since = since,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           if constexpr (requires(const Node& n) { Op::make(n); }) {
             RECUR_ASSIGN_OR_RETURN(Op op, Op::make(c.node()));
             return std::make_unique<BinaryKernel<Op>>(std::move(op));
           } else {
             return std::make_unique<BinaryKernel<Op>>(Op{});
           }
         },
         .takes_strings = takes_strings},
        infer_binary(Op::kBoolOut ? DType::kBool : DType::kUndefined, Op::kLegacyAttrs));
}

}  // namespace recur::reference
