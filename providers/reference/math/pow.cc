// Pow: X ** Y with broadcasting. The output has X's dtype; from opset 12 Y may have another
// dtype (accepted at every opset here). Integer ** integer is exact with wrapping; every other
// combination is computed in double and converted to X's dtype as Cast does.
#include <cmath>
#include <limits>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

inline constexpr auto kBaseTypes = kFloatTypes + TypeList<int32_t, int64_t>{};

// base ** exponent for integers, by squaring, wrapping on overflow. A negative exponent
// truncates 1 / base**|exponent| toward zero; 0 to a negative power has no value.
template <class T, class E>
bool int_pow(T base, E exponent, T* out) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 0) return false;
      if (base == 1) {
        *out = 1;
      } else if (std::is_signed_v<T> && base == static_cast<T>(-1)) {
        *out = (exponent % 2 == 0) ? T(1) : static_cast<T>(-1);
      } else {
        *out = 0;
      }
      return true;
    }
  }
  using UE = std::make_unsigned_t<E>;
  UE e = static_cast<UE>(exponent);
  T result = 1, b = base;
  while (e != 0) {
    if (e & 1u) result = wrap_mul(result, b);
    e = static_cast<UE>(e >> 1);
    if (e != 0) b = wrap_mul(b, b);
  }
  *out = result;
  return true;
}

template <class T>
double to_double(T v) {
  return static_cast<double>(to_compute(v));
}

template <class T, class E>
T pow_value(T a, E b, bool& ok) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    T r{};
    ok &= int_pow(a, b, &r);
    return r;
  } else {
    return convert<T>(std::pow(to_double(a), to_double(b)));
  }
}

// The exponent when it is one number, else NaN.
double scalar_exponent(const Tensor& y) {
  double e = std::numeric_limits<double>::quiet_NaN();
  if (y.numel() != 1 || !y.is_cpu()) return e;
  visit_dtype(kNumericTypes, y.dtype(),
              [&](auto tag) { e = to_double(y.data<typename decltype(tag)::type>()[0]); });
  return e;
}

// x ** 2 and x ** 0.5 over float32 or float64 x with one exponent (the magnitude of an STFT in
// audio front ends) as x * x and sqrt(x), a fraction of the cost of pow in double. For float32
// they give the general path's values: the square is exact in double before its one rounding,
// sqrt is correctly rounded, and the two inputs where sqrt differs from pow (-0 and -inf) are
// put back.
template <class T>
bool pow_fast_path(const Tensor& x, double e, Tensor& out) {
  const T* xp = x.data<T>();
  T* yp = out.data<T>();
  const int64_t n = x.numel();
  if (e == 2.0) {
    for (int64_t i = 0; i < n; ++i) yp[i] = xp[i] * xp[i];
    return true;
  }
  if (e == 0.5) {
    for (int64_t i = 0; i < n; ++i) {
      const T v = xp[i];
      // pow(-0, 0.5) is +0 and pow(-inf, 0.5) is +inf; sqrt gives -0 and NaN.
      yp[i] = v == -std::numeric_limits<T>::infinity() ? -v : std::sqrt(v) + T(0);
    }
    return true;
  }
  return false;
}

bool try_pow_fast_path(const Tensor& x, const Tensor& y, const Shape& out_shape, Tensor& out) {
  if (out_shape != x.shape()) return false;
  const double e = scalar_exponent(y);
  if (e != 2.0 && e != 0.5) return false;
  if (x.dtype() == DType::kFloat32) return pow_fast_path<float>(x, e, out);
  if (x.dtype() == DType::kFloat64) return pow_fast_path<double>(x, e, out);
  return false;
}

class PowKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* y, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(BinaryShapes s, binary_shapes(ctx, *x, *y, /*legacy_attrs=*/true));
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), s.out));
    if (try_pow_fast_path(*x, *y, s.out, *out)) return ok_status();
    bool ok = true;
    bool handled_y = true;
    const bool handled_x = visit_dtype(kBaseTypes, x->dtype(), [&](auto xtag) {
      using T = typename decltype(xtag)::type;
      handled_y = visit_dtype(kNumericTypes, y->dtype(), [&](auto ytag) {
        using E = typename decltype(ytag)::type;
        broadcast_binary<T, E, T>(*x, *y, *out, s, [&](T a, E b) { return pow_value(a, b, ok); });
      });
    });
    if (!handled_x) return unsupported_dtype(ctx, x->dtype());
    if (!handled_y) return unsupported_dtype(ctx, y->dtype());
    if (!ok) return ctx.error(ErrorCode::kInvalidArgument, "integer 0 to a negative power");
    return ok_status();
  }
};

}  // namespace

void register_pow(Registrar& r) {
  r.add({.op_type = "Pow", .since = 1, .create = make_simple<PowKernel>()},
        infer_binary(DType::kUndefined, /*legacy_attrs=*/true));
}

}  // namespace recur::reference
