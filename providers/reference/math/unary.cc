// Elementwise functions of one input without attributes (IsInf's detect flags aside): Relu,
// Tanh, Sigmoid, Exp, Log, Sqrt, Neg, Abs, Reciprocal, Floor, Ceil, Round, Sign, Erf, the
// trigonometric and hyperbolic functions, IsNaN, IsInf and Not.
#include <cmath>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

// A function of floating-point inputs only, written on the compute type C.
#define RECUR_FLOAT_UNARY(Name, expr)           \
  struct Name {                                 \
    static constexpr auto kTypes = kFloatTypes; \
    static constexpr bool kBoolOut = false;     \
    template <class C>                          \
    C operator()(C x) const {                   \
      return expr;                              \
    }                                           \
  };

RECUR_FLOAT_UNARY(Tanh, std::tanh(x))
RECUR_FLOAT_UNARY(Exp, std::exp(x))
RECUR_FLOAT_UNARY(Log, std::log(x))
RECUR_FLOAT_UNARY(Sqrt, std::sqrt(x))
RECUR_FLOAT_UNARY(Reciprocal, C(1) / x)
RECUR_FLOAT_UNARY(Floor, std::floor(x))
RECUR_FLOAT_UNARY(Ceil, std::ceil(x))
RECUR_FLOAT_UNARY(Sin, std::sin(x))
RECUR_FLOAT_UNARY(Cos, std::cos(x))
RECUR_FLOAT_UNARY(Tan, std::tan(x))
RECUR_FLOAT_UNARY(Asin, std::asin(x))
RECUR_FLOAT_UNARY(Acos, std::acos(x))
RECUR_FLOAT_UNARY(Atan, std::atan(x))
RECUR_FLOAT_UNARY(Sinh, std::sinh(x))
RECUR_FLOAT_UNARY(Cosh, std::cosh(x))
RECUR_FLOAT_UNARY(Asinh, std::asinh(x))
RECUR_FLOAT_UNARY(Acosh, std::acosh(x))
RECUR_FLOAT_UNARY(Atanh, std::atanh(x))

#undef RECUR_FLOAT_UNARY

// Without overflow of exp for large |x|.
struct Sigmoid {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    if (x >= 0) return C(1) / (C(1) + std::exp(-x));
    const C e = std::exp(x);
    return e / (C(1) + e);
  }
};

// Halfway cases to even, whatever the floating-point environment's rounding mode. A zero keeps
// x's sign (Round(-0.4) is -0, as in numpy and ONNX Runtime), which f + 1 = +0 would lose.
struct Round {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    const C f = std::floor(x);
    const C d = x - f;
    if (d > C(0.5) || (d == C(0.5) && std::fmod(f, C(2)) != C(0)))
      return std::copysign(f + C(1), x);
    return f;
  }
};

// NaN stays NaN, as numpy's maximum(x, 0) does.
struct Relu {
  static constexpr auto kTypes = kFloatTypes + kSignedIntTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    return x < C(0) ? C(0) : x;
  }
};

struct Neg {
  static constexpr auto kTypes = kFloatTypes + kSignedIntTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return wrap_neg(x);  // -INT_MIN wraps to INT_MIN, as in numpy
    } else {
      return -x;
    }
  }
};

struct Abs {
  static constexpr auto kTypes = kNumericTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < 0 ? wrap_neg(x) : x;
    } else {
      return std::fabs(x);
    }
  }
};

// NaN is returned as it is; a zero of either sign gives +0, as numpy's sign and ONNX Runtime's do.
struct Sign {
  static constexpr auto kTypes = kNumericTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    if (x > C(0)) return C(1);
    if constexpr (std::is_signed_v<C>) {
      if (x < C(0)) return C(-1);
    }
    return x == C(0) ? C(0) : x;
  }
};

// Integer inputs are computed in double and truncated (the result is 0 for every integer).
struct Erf {
  static constexpr auto kTypes = kNumericTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return convert<C>(std::erf(static_cast<double>(x)));
    } else {
      return std::erf(x);
    }
  }
};

// IsNaN and IsInf take the float8 types from opset 20.
struct IsNaN {
  static constexpr auto kTypes = kFloatTypes + kFloat8Types;
  static constexpr bool kBoolOut = true;
  template <class C>
  bool operator()(C x) const {
    return std::isnan(x);
  }
};

struct IsInf {
  static constexpr auto kTypes = kFloatTypes + kFloat8Types;
  static constexpr bool kBoolOut = true;
  bool positive = true;
  bool negative = true;

  static Result<IsInf> make(const Node& node) {
    AttrReader attrs(node);
    IsInf op;
    op.positive = attrs.get_int("detect_positive", 1) != 0;
    op.negative = attrs.get_int("detect_negative", 1) != 0;
    RECUR_RETURN_IF_ERROR(attrs.status());
    return op;
  }
  template <class C>
  bool operator()(C x) const {
    return std::isinf(x) && (x > 0 ? positive : negative);
  }
};

struct Not {
  static constexpr auto kTypes = TypeList<bool>{};
  static constexpr bool kBoolOut = false;
  bool operator()(bool x) const { return !x; }
};

}  // namespace

void register_unary(Registrar& r) {
  add_unary<Relu>(r, "Relu", 1);
  add_unary<Tanh>(r, "Tanh", 1);
  add_unary<Sigmoid>(r, "Sigmoid", 1);
  add_unary<Exp>(r, "Exp", 1);
  add_unary<Log>(r, "Log", 1);
  add_unary<Sqrt>(r, "Sqrt", 1);
  add_unary<Neg>(r, "Neg", 1);
  add_unary<Abs>(r, "Abs", 1);
  add_unary<Reciprocal>(r, "Reciprocal", 1);
  add_unary<Floor>(r, "Floor", 1);
  add_unary<Ceil>(r, "Ceil", 1);
  add_unary<Round>(r, "Round", 11);
  add_unary<Sign>(r, "Sign", 9);
  add_unary<Erf>(r, "Erf", 9);
  add_unary<Sin>(r, "Sin", 7);
  add_unary<Cos>(r, "Cos", 7);
  add_unary<Tan>(r, "Tan", 7);
  add_unary<Asin>(r, "Asin", 7);
  add_unary<Acos>(r, "Acos", 7);
  add_unary<Atan>(r, "Atan", 7);
  add_unary<Sinh>(r, "Sinh", 9);
  add_unary<Cosh>(r, "Cosh", 9);
  add_unary<Asinh>(r, "Asinh", 9);
  add_unary<Acosh>(r, "Acosh", 9);
  add_unary<Atanh>(r, "Atanh", 9);
  add_unary<IsNaN>(r, "IsNaN", 9);
  add_unary<IsInf>(r, "IsInf", 10);
  add_unary<Not>(r, "Not", 1);
}

}  // namespace recur::reference
