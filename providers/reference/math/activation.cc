// Elementwise activation functions with attributes: Elu, Selu, Celu, LeakyRelu,
// ThresholdedRelu, HardSigmoid, HardSwish, Softplus, Softsign, Shrink, Mish, Gelu and Swish;
// and the experimental operators of opsets before 10 that ONNX Runtime still runs in old models:
// Affine, Scale, ScaledTanh and ParametricSoftplus (ThresholdedRelu was one of them too).
#include <algorithm>
#include <cmath>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

// Reads one float attribute with a default.
template <class Op>
Result<Op> with_alpha(const Node& node, float def) {
  AttrReader attrs(node);
  Op op;
  op.alpha = attrs.get_float("alpha", def);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return op;
}

// Two float attributes with defaults.
template <class Op>
Result<Op> with_alpha_beta(const Node& node, float alpha, float beta) {
  AttrReader attrs(node);
  Op op;
  op.alpha = attrs.get_float("alpha", alpha);
  op.beta = attrs.get_float("beta", beta);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return op;
}

struct Elu {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 1.0f;
  static Result<Elu> make(const Node& n) { return with_alpha<Elu>(n, 1.0f); }
  template <class C>
  C operator()(C x) const {
    return x < C(0) ? C(alpha) * std::expm1(x) : x;
  }
};

struct Selu {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 0, gamma = 0;
  static Result<Selu> make(const Node& n) {
    // Opset 1 documented rounder defaults than opset 6.
    const bool v1 = n.opset < 6;
    AttrReader attrs(n);
    Selu op;
    op.alpha = attrs.get_float("alpha", v1 ? 1.6732f : 1.67326319217681884765625f);
    op.gamma = attrs.get_float("gamma", v1 ? 1.0507f : 1.05070102214813232421875f);
    RECUR_RETURN_IF_ERROR(attrs.status());
    return op;
  }
  template <class C>
  C operator()(C x) const {
    return x > C(0) ? C(gamma) * x : C(gamma) * C(alpha) * std::expm1(x);
  }
};

struct Celu {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 1.0f;
  static Result<Celu> make(const Node& n) {
    RECUR_ASSIGN_OR_RETURN(Celu op, with_alpha<Celu>(n, 1.0f));
    if (op.alpha == 0.0f) return invalid_model(n.describe() + ": alpha must not be 0");
    return op;
  }
  template <class C>
  C operator()(C x) const {
    return x > C(0) ? x : C(alpha) * std::expm1(x / C(alpha));
  }
};

struct LeakyRelu {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 0.01f;
  static Result<LeakyRelu> make(const Node& n) { return with_alpha<LeakyRelu>(n, 0.01f); }
  template <class C>
  C operator()(C x) const {
    return x < C(0) ? C(alpha) * x : x;
  }
};

struct ThresholdedRelu {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 1.0f;
  static Result<ThresholdedRelu> make(const Node& n) {
    return with_alpha<ThresholdedRelu>(n, 1.0f);
  }
  template <class C>
  C operator()(C x) const {
    return x > C(alpha) ? x : (std::isnan(x) ? x : C(0));
  }
};

struct HardSigmoid {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 0.2f, beta = 0.5f;
  static Result<HardSigmoid> make(const Node& n) {
    return with_alpha_beta<HardSigmoid>(n, 0.2f, 0.5f);
  }
  template <class C>
  C operator()(C x) const {
    return nan_max(C(0), nan_min(C(1), C(alpha) * x + C(beta)));
  }
};

// x * HardSigmoid(x) with alpha = 1/6, beta = 0.5.
struct HardSwish {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    return x * nan_max(C(0), nan_min(C(1), x / C(6) + C(0.5)));
  }
};

// log(1 + exp(x)) without overflow for large x.
struct Softplus {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

struct Softsign {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    return x / (C(1) + std::fabs(x));
  }
};

// Integer inputs are computed in double and converted back (wrapping, as Cast does).
struct Shrink {
  static constexpr auto kTypes = kNumericTypes;
  static constexpr bool kBoolOut = false;
  float lambd = 0.5f, bias = 0.0f;
  static Result<Shrink> make(const Node& n) {
    AttrReader attrs(n);
    Shrink op;
    op.lambd = attrs.get_float("lambd", 0.5f);
    op.bias = attrs.get_float("bias", 0.0f);
    RECUR_RETURN_IF_ERROR(attrs.status());
    return op;
  }
  template <class C>
  C operator()(C x) const {
    using F = std::conditional_t<std::is_integral_v<C>, double, C>;
    const F v = static_cast<F>(x);
    F r = 0;
    if (v < -F(lambd)) {
      r = v + F(bias);
    } else if (v > F(lambd)) {
      r = v - F(bias);
    } else if (std::isnan(v)) {
      r = v;
    }
    return convert<C>(r);
  }
};

struct Mish {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    return x * std::tanh(std::log1p(std::exp(x)));
  }
};

// Swish (opset 24): x * sigmoid(alpha * x).
struct Swish {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 1.0f;
  static Result<Swish> make(const Node& n) { return with_alpha<Swish>(n, 1.0f); }
  template <class C>
  C operator()(C x) const {
    return x / (C(1) + std::exp(-C(alpha) * x));
  }
};

struct Gelu {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  bool tanh_approx = false;
  static Result<Gelu> make(const Node& n) {
    AttrReader attrs(n);
    const std::string approximate = attrs.get_string("approximate", "none");
    RECUR_RETURN_IF_ERROR(attrs.status());
    if (approximate != "none" && approximate != "tanh") {
      return invalid_model(n.describe() + ": approximate must be \"none\" or \"tanh\", not \"" +
                           approximate + "\"");
    }
    return Gelu{.tanh_approx = approximate == "tanh"};
  }
  template <class C>
  C operator()(C x) const {
    if (tanh_approx) {
      const C k = static_cast<C>(0.7978845608028654);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(0.7071067811865476)));
  }
};

// The experimental operators: alpha * x + beta; scale * x; alpha * tanh(beta * x);
// alpha * log(1 + exp(beta * x)). Their definitions give no defaults but Affine's and Scale's;
// the others take 1, as the RNN activations of the same names do.
struct Affine {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 1.0f, beta = 0.0f;
  static Result<Affine> make(const Node& n) { return with_alpha_beta<Affine>(n, 1.0f, 0.0f); }
  template <class C>
  C operator()(C x) const {
    return C(alpha) * x + C(beta);
  }
};

struct Scale {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float scale = 1.0f;
  static Result<Scale> make(const Node& n) {
    AttrReader attrs(n);
    Scale op;
    op.scale = attrs.get_float("scale", 1.0f);
    RECUR_RETURN_IF_ERROR(attrs.status());
    return op;
  }
  template <class C>
  C operator()(C x) const {
    return C(scale) * x;
  }
};

struct ScaledTanh {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 1.0f, beta = 1.0f;
  static Result<ScaledTanh> make(const Node& n) {
    return with_alpha_beta<ScaledTanh>(n, 1.0f, 1.0f);
  }
  template <class C>
  C operator()(C x) const {
    return C(alpha) * std::tanh(C(beta) * x);
  }
};

struct ParametricSoftplus {
  static constexpr auto kTypes = kFloatTypes;
  static constexpr bool kBoolOut = false;
  float alpha = 1.0f, beta = 1.0f;
  static Result<ParametricSoftplus> make(const Node& n) {
    return with_alpha_beta<ParametricSoftplus>(n, 1.0f, 1.0f);
  }
  template <class C>
  C operator()(C x) const {
    return C(alpha) * Softplus{}(C(beta) * x);
  }
};

}  // namespace

void register_activation(Registrar& r) {
  add_unary<Elu>(r, "Elu", 1);
  add_unary<Selu>(r, "Selu", 1);
  add_unary<Celu>(r, "Celu", 12);
  add_unary<LeakyRelu>(r, "LeakyRelu", 1);
  add_unary<ThresholdedRelu>(r, "ThresholdedRelu", 1);
  add_unary<HardSigmoid>(r, "HardSigmoid", 1);
  add_unary<HardSwish>(r, "HardSwish", 14);
  add_unary<Softplus>(r, "Softplus", 1);
  add_unary<Softsign>(r, "Softsign", 1);
  add_unary<Shrink>(r, "Shrink", 9);
  add_unary<Mish>(r, "Mish", 18);
  add_unary<Gelu>(r, "Gelu", 20);
  add_unary<Swish>(r, "Swish", 24);
  add_unary<Affine>(r, "Affine", 1);
  add_unary<Scale>(r, "Scale", 1);
  add_unary<ScaledTanh>(r, "ScaledTanh", 1);
  add_unary<ParametricSoftplus>(r, "ParametricSoftplus", 1);
}

}  // namespace recur::reference
