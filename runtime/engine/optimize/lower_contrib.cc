// ONNX Runtime's fused operators, as its graph optimizer writes them into the models it saves
// (SessionOptions.optimized_model_filepath, level extended or above): FusedConv, FusedGemm,
// FusedMatMul, the GELU family, the skip and simplified layer normalizations and the dynamic
// int8 MatMuls. Each becomes the ONNX operators it fused, in the arithmetic's order, so that
// every provider runs it (oneDNN, the CUDA glue kernels and the reference alike) and recur's
// own fusions (fuse_conv.cc) can take the chain again where a provider gains from it.
// docs/semantics.md ("ONNX Runtime's optimized models") lists the operators and their forms.
#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recur/dtype.h"
#include "runtime/engine/optimize/lowering.h"
#include "runtime/engine/optimize/optimizer.h"

namespace recur {

namespace {

using lowering::copy_attrs;
using lowering::kMicrosoft;
using lowering::LowerFn;
using lowering::Lowering;
using lowering::set_float;
using lowering::set_int;
using lowering::set_ints;
using lowering::short_float;

// ---- Activations (FusedConv's activation_params, FusedGemm's activation_alpha/beta/gamma) ----

struct ActivationParams {
  std::optional<float> alpha, beta, gamma;
};

struct ActivationForm {
  const char* name;
  int params;  // how many of alpha, beta, gamma it reads (Clip: min, max)
};

// ConvActivationFusion's activations and GemmActivationFusion's, in one list.
constexpr std::array<ActivationForm, 15> kActivations = {{{"Relu", 0},
                                                          {"Sigmoid", 0},
                                                          {"Tanh", 0},
                                                          {"Silu", 0},
                                                          {"Softplus", 0},
                                                          {"Softsign", 0},
                                                          {"LeakyRelu", 1},
                                                          {"Elu", 1},
                                                          {"Celu", 1},
                                                          {"ThresholdedRelu", 1},
                                                          {"Clip", 2},
                                                          {"HardSigmoid", 2},
                                                          {"ScaledTanh", 2},
                                                          {"ParametricSoftplus", 2},
                                                          {"Selu", 2}}};

const ActivationForm* find_activation(std::string_view name) {
  for (const ActivationForm& a : kActivations)
    if (name == a.name) return &a;
  return nullptr;
}

std::string activation_names() {
  std::string s;
  for (const ActivationForm& a : kActivations) s += std::string(s.empty() ? "" : ", ") + a.name;
  return s;
}

Status unknown_activation(const Lowering& l, const std::string& act) {
  return l.error("activation '" + act + "' is not one ONNX Runtime fuses (" + activation_names() +
                 ")");
}

// y = act(x). Parameters the activation's ONNX operator defaults are passed only where given;
// ScaledTanh and ParametricSoftplus, which have no ONNX operator, need both.
Status lower_activation(Lowering& l, const std::string& act, const ActivationParams& p, ValueId x,
                        ValueId y, DType t) {
  auto with_alpha = [&](const char* op, int opset) {
    Node& n = l.add(op, opset, {x}, {y});
    if (p.alpha) set_float(n, "alpha", *p.alpha);
    return ok_status();
  };
  struct Plain {
    const char* name;
    int opset;
  };
  for (const Plain& f : {Plain{"Relu", 14}, Plain{"Sigmoid", 13}, Plain{"Tanh", 13},
                         Plain{"Softplus", 1}, Plain{"Softsign", 1}}) {
    if (act == f.name) {
      l.add(act, f.opset, {x}, {y});
      return ok_status();
    }
  }
  if (act == "Silu") {
    Node& n = l.add("Swish", 24, {x}, {y});
    set_float(n, "alpha", 1.0f);
    return ok_status();
  }
  if (act == "LeakyRelu") return with_alpha("LeakyRelu", 16);
  if (act == "Elu") return with_alpha("Elu", 6);
  if (act == "Celu") return with_alpha("Celu", 12);
  if (act == "ThresholdedRelu") return with_alpha("ThresholdedRelu", 10);
  if (act == "HardSigmoid" || act == "Selu") {
    Node& n = l.add(act, 6, {x}, {y});
    if (p.alpha) set_float(n, "alpha", *p.alpha);
    if (act == "HardSigmoid" && p.beta) set_float(n, "beta", *p.beta);
    if (act == "Selu" && p.gamma) set_float(n, "gamma", *p.gamma);
    return ok_status();
  }
  if (act == "Clip") {
    // FusedConv's two parameters are Clip's min and max.
    std::vector<ValueId> in = {x, kNoValue, kNoValue};
    if (p.alpha) {
      RECUR_ASSIGN_OR_RETURN(in[1], l.scalar("clip_min", t, *p.alpha));
    }
    if (p.beta) {
      RECUR_ASSIGN_OR_RETURN(in[2], l.scalar("clip_max", t, *p.beta));
    }
    l.add("Clip", 13, std::move(in), {y});
    return ok_status();
  }
  if (act == "ScaledTanh" || act == "ParametricSoftplus") {
    // alpha * f(beta * x)
    if (!p.alpha || !p.beta) return l.error(act + " needs its alpha and beta");
    RECUR_ASSIGN_OR_RETURN(const ValueId beta, l.scalar("activation_beta", t, *p.beta));
    RECUR_ASSIGN_OR_RETURN(const ValueId alpha, l.scalar("activation_alpha", t, *p.alpha));
    const ValueId bx = l.binary("Mul", x, beta, kNoValue, t);
    const ValueId f = act == "ScaledTanh" ? l.unary("Tanh", 13, bx, kNoValue, t)
                                          : l.unary("Softplus", 1, bx, kNoValue, t);
    l.binary("Mul", f, alpha, y, t);
    return ok_status();
  }
  return unknown_activation(l, act);
}

// ---- The operators ----

// The type the lowered nodes compute in: v's (the node's required first input, or a scale).
DType value_type(const Lowering& l, ValueId v) {
  return v == kNoValue ? DType::kFloat32 : l.dtype(v);
}

// FusedConv(X, W, B?, Z?): act(Conv(X, W, B) + Z).
Status lower_fused_conv(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(2));
  const Node& n = l.original();
  const DType t = value_type(l, l.in(0));
  const Attribute* a = n.attr("activation");
  const std::string act = a ? a->s : std::string();
  const ValueId y = l.out(0);
  const bool z = l.in(3) != kNoValue;
  const ValueId conv_y = (z || !act.empty()) ? l.temp("conv", t) : y;
  Node& conv = l.add("Conv", 11, {l.in(0), l.in(1), l.in(2)}, {conv_y});
  copy_attrs(n, conv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  ValueId pre = conv_y;
  if (z) pre = l.binary("Add", conv_y, l.in(3), act.empty() ? y : kNoValue, t);
  if (!act.empty()) RECUR_RETURN_IF_ERROR(lowering::lower_conv_activation(l, pre, y, t));
  l.commit(act.empty() ? "no activation" : "activation " + act, t);
  return ok_status();
}

// FusedGemm(A, B, C?): act(alpha A' B' + beta C).
Status lower_fused_gemm(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(2));
  const Node& n = l.original();
  AttrReader a(n);
  const std::string act = a.get_string("activation", "");
  ActivationParams p;
  if (a.has("activation_alpha")) p.alpha = a.get_float("activation_alpha", 0.0f);
  if (a.has("activation_beta")) p.beta = a.get_float("activation_beta", 0.0f);
  if (a.has("activation_gamma")) p.gamma = a.get_float("activation_gamma", 0.0f);
  RECUR_RETURN_IF_ERROR(a.status());
  if (act.empty()) return l.error("has no activation (FusedGemm needs one)");
  if (act == "Clip") return l.error("activation Clip: ONNX Runtime fuses no Clip into a Gemm");
  const DType t = value_type(l, l.in(0));
  const ValueId gemm_y = l.temp("gemm", t);
  Node& gemm = l.add("Gemm", 13, {l.in(0), l.in(1), l.in(2)}, {gemm_y});
  copy_attrs(n, gemm, {"alpha", "beta", "transA", "transB"});
  RECUR_RETURN_IF_ERROR(lower_activation(l, act, p, gemm_y, l.out(0), t));
  l.commit("activation " + act, t);
  return ok_status();
}

// The permutation FusedMatMul applies to an operand of rank r before multiplying: transBatch
// moves axis 0 between the batch axes and the last (so [M, B..., K] reads as [B..., M, K]),
// trans then swaps the last two. Empty when it is the identity.
std::vector<int64_t> matmul_perm(int64_t r, bool trans, bool trans_batch) {
  if (r < 2) return {};
  std::vector<int64_t> perm(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) perm[static_cast<size_t>(i)] = i;
  if (trans_batch && r >= 3) {
    for (int64_t i = 0; i + 2 < r; ++i) perm[static_cast<size_t>(i)] = i + 1;
    perm[static_cast<size_t>(r - 2)] = 0;
  }
  if (trans) std::swap(perm[static_cast<size_t>(r - 2)], perm[static_cast<size_t>(r - 1)]);
  for (int64_t i = 0; i < r; ++i)
    if (perm[static_cast<size_t>(i)] != i) return perm;
  return {};
}

// FusedMatMul(A, B) (and its older name TransposeMatMul): alpha * MatMul(A', B').
Status lower_fused_matmul(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(2));
  const Node& n = l.original();
  AttrReader a(n);
  const float alpha = a.get_float("alpha", 1.0f);
  const bool flags[2][2] = {{a.get_int("transA", 0) != 0, a.get_int("transBatchA", 0) != 0},
                            {a.get_int("transB", 0) != 0, a.get_int("transBatchB", 0) != 0}};
  RECUR_RETURN_IF_ERROR(a.status());
  const DType t = value_type(l, l.in(0));
  std::array<ValueId, 2> operand = {l.in(0), l.in(1)};
  std::array<std::vector<int64_t>, 2> perms;
  for (size_t k = 0; k < 2; ++k) {
    if (!flags[k][0] && !flags[k][1]) continue;
    const int64_t r = l.rank(operand[k]);
    if (r < 0) {
      return l.needs_shapes(std::string(k ? "B" : "A") +
                            "'s rank is not known, and the transposition its flags ask for "
                            "depends on it");
    }
    perms[k] = matmul_perm(r, flags[k][0], flags[k][1]);
  }
  // alpha scales a constant operand where there is one (the Mul is folded at load, as are
  // the transpositions of constants), else the product.
  int scaled = -1;
  if (alpha != 1.0f) scaled = l.is_constant(operand[1]) ? 1 : l.is_constant(operand[0]) ? 0 : -1;
  RECUR_ASSIGN_OR_RETURN(const ValueId s,
                         alpha != 1.0f ? l.scalar("alpha", t, alpha) : Result<ValueId>(kNoValue));
  for (size_t k = 0; k < 2; ++k) {
    if (static_cast<int>(k) == scaled) operand[k] = l.binary("Mul", operand[k], s, kNoValue, t);
    if (perms[k].empty()) continue;
    const ValueId tr = l.temp(k ? "B_transposed" : "A_transposed", t);
    set_ints(l.add("Transpose", 13, {operand[k]}, {tr}), "perm", perms[k]);
    operand[k] = tr;
  }
  const ValueId y = l.out(0);
  const bool scale_product = alpha != 1.0f && scaled < 0;
  l.add("MatMul", 13, {operand[0], operand[1]}, {scale_product ? l.temp("matmul", t) : y});
  l.keep_name();
  if (scale_product) l.binary("Mul", l.last_output(), s, y, t);
  l.commit("alpha " + short_float(alpha), t);
  return ok_status();
}

// Gelu(X), BiasGelu(A, B), FastGelu(X, bias?): Gelu-20 of X (+ bias), exact or tanh.
Status lower_gelu(Lowering& l, bool tanh) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  const DType t = value_type(l, l.in(0));
  ValueId x = l.in(0);
  if (l.in(1) != kNoValue) x = l.binary("Add", x, l.in(1), kNoValue, t);
  Node& g = l.add("Gelu", 20, {x}, {l.out(0)});
  l.keep_name();
  Attribute a;
  a.type = AttrType::kString;
  a.s = tanh ? "tanh" : "none";
  g.attributes["approximate"] = std::move(a);
  l.commit(tanh ? "tanh approximation" : "exact", t);
  return ok_status();
}

// QuickGelu(X): x * sigmoid(alpha x), which is Swish-24.
Status lower_quick_gelu(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  AttrReader a(l.original());
  const float alpha = a.get_float("alpha", 1.702f);
  RECUR_RETURN_IF_ERROR(a.status());
  const DType t = value_type(l, l.in(0));
  set_float(l.add("Swish", 24, {l.in(0)}, {l.out(0)}), "alpha", alpha);
  l.commit("alpha " + short_float(alpha), t);
  return ok_status();
}

// BiasAdd(X, bias, skip): X + bias + skip.
Status lower_bias_add(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(3));
  const DType t = value_type(l, l.in(0));
  const ValueId s = l.binary("Add", l.in(0), l.in(1), kNoValue, t);
  l.binary("Add", s, l.in(2), l.out(0), t);
  l.commit("X + bias + skip", t);
  return ok_status();
}

// Root-mean-square normalization of x over `axes` (the last ones): y = x / sqrt(mean(x^2) +
// eps) * scale, with 1 / sqrt(...) written to inv_std (float32) and zeros to mean where they
// are asked for. Without them it is one RMSNormalization-23 node.
Status lower_rms(Lowering& l, ValueId x, ValueId scale, int64_t axis, float eps, ValueId y,
                 ValueId mean, ValueId inv_std, DType t) {
  if (mean == kNoValue && inv_std == kNoValue) {
    Node& r = l.add("RMSNormalization", 23, {x, scale}, {y});
    l.keep_name();
    set_int(r, "axis", axis);
    set_float(r, "epsilon", eps);
    return ok_status();
  }
  std::vector<int64_t> axes = {-1};
  if (axis != -1) {
    const int64_t r = l.rank(x);
    if (r < 0) return l.needs_shapes("its input's rank is not known, and its axis is not -1");
    const int64_t first = axis < 0 ? axis + r : axis;
    if (first < 0 || first >= r)
      return l.error("axis " + std::to_string(axis) + " is outside the input's rank " +
                     std::to_string(r));
    axes.clear();
    for (int64_t k = first; k < r; ++k) axes.push_back(k);
  }
  const ValueId sq = l.binary("Mul", x, x, kNoValue, t);
  const ValueId ms = l.temp("mean_square", t);
  Node& rm = l.add("ReduceMean", 18, {sq, l.int64s("axes", axes)}, {ms});
  set_int(rm, "keepdims", 1);
  RECUR_ASSIGN_OR_RETURN(const ValueId e, l.scalar("epsilon", t, eps));
  const ValueId var = l.binary("Add", ms, e, kNoValue, t);
  const ValueId rms = l.unary("Sqrt", 13, var, kNoValue, t);
  const ValueId normed = l.binary("Div", x, rms, kNoValue, t);
  l.binary("Mul", normed, scale, y, t);
  if (inv_std == kNoValue && t == DType::kFloat32) inv_std = l.temp("inv_std_var", t);
  if (t == DType::kFloat32) {
    l.unary("Reciprocal", 13, rms, inv_std, t);
  } else {
    // ONNX Runtime writes the statistics in float32 whatever the input's type.
    if (inv_std == kNoValue) inv_std = l.temp("inv_std_var", DType::kFloat32);
    const ValueId inv = l.unary("Reciprocal", 13, rms, kNoValue, t);
    set_int(l.add("Cast", 13, {inv}, {inv_std}), "to", static_cast<int64_t>(DType::kFloat32));
  }
  if (mean != kNoValue) {
    // ONNX Runtime writes zeros there.
    RECUR_ASSIGN_OR_RETURN(const ValueId zero, l.scalar("zero", DType::kFloat32, 0.0));
    l.binary("Mul", inv_std, zero, mean, DType::kFloat32);
  }
  return ok_status();
}

// SkipLayerNormalization(input, skip, gamma, beta?, bias?) and
// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): the sum input + skip (+ bias),
// written to output 3 where asked for, normalized over the last axis into output 0, with the
// mean and 1 / std in outputs 1 and 2.
Status lower_skip_norm(Lowering& l, bool simplified) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(3));
  AttrReader a(l.original());
  const float eps = a.get_float("epsilon", 1e-12f);
  RECUR_RETURN_IF_ERROR(a.status());
  const DType t = value_type(l, l.in(0));
  const ValueId bias = l.in(simplified ? 3 : 4);
  const ValueId sum_out = l.out(3);
  // (input + bias) + skip: the bias joins the input first, so that the MatMul that usually
  // writes the input takes it as its own (fuse_matmul.cc). ONNX Runtime sums in another order;
  // the two differ by rounding only.
  ValueId sum = l.in(0);
  if (bias != kNoValue) sum = l.binary("Add", sum, bias, kNoValue, t);
  sum = l.binary("Add", sum, l.in(1), sum_out, t);
  if (simplified) {
    RECUR_RETURN_IF_ERROR(lower_rms(l, sum, l.in(2), -1, eps, l.out(0), l.out(1), l.out(2), t));
  } else {
    Node& ln =
        l.add("LayerNormalization", 17, {sum, l.in(2), l.in(3)}, {l.out(0), l.out(1), l.out(2)});
    set_int(ln, "axis", -1);
    set_float(ln, "epsilon", eps);
    l.keep_name();
  }
  l.commit("epsilon " + short_float(eps), t);
  return ok_status();
}

// SimplifiedLayerNormalization(X, scale) of ONNX Runtime's ONNX-domain schema.
Status lower_simplified_layer_norm(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(2));
  AttrReader a(l.original());
  const int64_t axis = a.get_int("axis", -1);
  const float eps = a.get_float("epsilon", 1e-5f);
  RECUR_RETURN_IF_ERROR(a.status());
  const DType t = value_type(l, l.in(0));
  RECUR_RETURN_IF_ERROR(lower_rms(l, l.in(0), l.in(1), axis, eps, l.out(0), kNoValue, l.out(1), t));
  l.commit("axis " + std::to_string(axis), t);
  return ok_status();
}

// Trilu and GridSample of ONNX Runtime's domain, which its PyTorch export helper
// (onnxruntime.tools.pytorch_export_contrib_ops) writes for torch.triu, torch.tril and
// grid_sample at opsets before ONNX had them: ONNX's Trilu-14 and GridSample-16 took their
// inputs, attributes and defaults.
Status lower_as_onnx(Lowering& l, const char* op, int opset,
                     std::initializer_list<const char*> attrs) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(op == std::string("GridSample") ? 2 : 1));
  const DType t = value_type(l, l.in(0));
  copy_attrs(l.original(), l.add(op, opset, l.original().inputs, {l.out(0)}), attrs);
  l.commit(std::string("as ONNX's ") + op + "-" + std::to_string(opset), t);
  return ok_status();
}

// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?) and
// DynamicQuantizeMatMul(A, B, b_scale, b_zp?, bias?), whose A is quantized as
// DynamicQuantizeLinear does: MatMulInteger, then the int32 sums times a_scale * b_scale, plus
// bias.
Status lower_integer_matmul(Lowering& l, bool dynamic) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(dynamic ? 3 : 4));
  ValueId a = l.in(0), a_scale, a_zp, b_scale, b_zp, bias;
  const DType t = dynamic ? DType::kFloat32 : value_type(l, l.in(2));
  if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kFloat64) {
    return l.error("a_scale is " + std::string(dtype_name(t)) + "; the scales are float");
  }
  if (dynamic) {
    a = l.temp("A_quantized", DType::kUInt8);
    a_scale = l.temp("A_scale", DType::kFloat32);
    a_zp = l.temp("A_zero_point", DType::kUInt8);
    l.add("DynamicQuantizeLinear", 11, {l.in(0)}, {a, a_scale, a_zp});
    b_scale = l.in(2);
    b_zp = l.in(3);
    bias = l.in(4);
  } else {
    a_scale = l.in(2);
    b_scale = l.in(3);
    a_zp = l.in(4);
    b_zp = l.in(5);
    bias = l.in(6);
  }
  const ValueId acc = l.temp("int32_product", DType::kInt32);
  l.add("MatMulInteger", 10, {a, l.in(1), a_zp, b_zp}, {acc});
  l.keep_name();
  const ValueId f = l.temp("product", t);
  set_int(l.add("Cast", 13, {acc}, {f}), "to", static_cast<int64_t>(t));
  const ValueId scale = l.binary("Mul", a_scale, b_scale, kNoValue, t);
  const ValueId y = l.binary("Mul", f, scale, bias == kNoValue ? l.out(0) : kNoValue, t);
  if (bias != kNoValue) l.binary("Add", y, bias, l.out(0), t);
  l.commit(dynamic ? "A quantized per tensor to uint8" : "int32 products scaled to float", t);
  return ok_status();
}

// The lowering of `n`, if recur lowers its operator.
LowerFn lowering_for(const Node& n) {
  if (n.domain.empty()) {
    // ONNX Runtime's own schemas in the ONNX domain: LayerNormalization before opset 17 is
    // handled where it is met (it only changes version).
    if (n.op_type == "SimplifiedLayerNormalization") return lower_simplified_layer_norm;
    return nullptr;
  }
  if (n.domain == lowering::kNchwc) return lowering::nchwc_lowering(n.op_type);
  if (n.domain != kMicrosoft) return nullptr;
  const std::string& op = n.op_type;
  if (op == "FusedConv") return lower_fused_conv;
  if (op == "FusedGemm") return lower_fused_gemm;
  if (op == "FusedMatMul" || op == "TransposeMatMul") return lower_fused_matmul;
  if (op == "Gelu" || op == "BiasGelu") return [](Lowering& l) { return lower_gelu(l, false); };
  if (op == "FastGelu") return [](Lowering& l) { return lower_gelu(l, true); };
  if (op == "QuickGelu") return lower_quick_gelu;
  if (op == "BiasAdd") return lower_bias_add;
  if (op == "Trilu") return [](Lowering& l) { return lower_as_onnx(l, "Trilu", 14, {"upper"}); };
  if (op == "GridSample") {
    return [](Lowering& l) {
      return lower_as_onnx(l, "GridSample", 16, {"align_corners", "mode", "padding_mode"});
    };
  }
  if (op == "SkipLayerNormalization") return [](Lowering& l) { return lower_skip_norm(l, false); };
  if (op == "SkipSimplifiedLayerNormalization")
    return [](Lowering& l) { return lower_skip_norm(l, true); };
  if (op == "MatMulIntegerToFloat")
    return [](Lowering& l) { return lower_integer_matmul(l, false); };
  if (op == "DynamicQuantizeMatMul")
    return [](Lowering& l) { return lower_integer_matmul(l, true); };
  if (LowerFn f = lowering::attention_lowering(op)) return f;
  return lowering::qlinear_lowering(op);
}

// Whether every input `n` is given has a known type: a lowering reads its operands' types (the
// type it computes in, whether a quantized operand is uint8 or int8), which an input made by
// a node lowered later in the same round lacks until shape inference has run over it.
bool inputs_typed(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (v != kNoValue && g.value(v).type.dtype == DType::kUndefined) return false;
  return true;
}

struct Round {
  const lowering::NchwcPlan* nchwc = nullptr;
  bool last = false;
  bool lowered = false;
  bool deferred = false;
};

// One round over `graph` and its subgraphs, each in topological order, so that a contrib node
// reading another's output finds its type set.
Status lower_round(Graph& graph, Round& round) {
  for (const Node& n : graph.nodes()) {
    for (const auto& [name, a] : n.attributes) {
      if (a.g) RECUR_RETURN_IF_ERROR(lower_round(*a.g, round));
      for (const auto& g : a.graphs) RECUR_RETURN_IF_ERROR(lower_round(*g, round));
    }
  }
  bool any = false;
  const std::vector<int> order = graph.topo_order();  // not the nodes lowering appends
  for (int i : order) {
    Node& n = graph.mutable_node(i);
    if (n.domain.empty() && n.op_type == "LayerNormalization" && n.opset < 17) {
      n.notes.push_back("ONNX Runtime's LayerNormalization of opset " + std::to_string(n.opset) +
                        " (before ONNX's own, of opset 17, which computes the same) runs as "
                        "LayerNormalization-17");
      n.opset = 17;
      any = true;
      continue;
    }
    const LowerFn lower = lowering_for(n);
    if (!lower) continue;
    if (!round.last && !inputs_typed(graph, n)) {
      round.deferred = true;
      continue;
    }
    Lowering l(graph, i, round.last);
    l.set_nchwc(round.nchwc);
    RECUR_RETURN_IF_ERROR(lower(l));
    if (l.deferred()) {
      round.deferred = true;
    } else {
      any = true;
    }
  }
  if (!any) return ok_status();
  round.lowered = true;
  return graph.finalize();
}

}  // namespace

namespace lowering {

Status lower_conv_activation(Lowering& l, ValueId x, ValueId y, DType t) {
  AttrReader a(l.original());
  const std::string act = a.get_string("activation", "");
  const std::vector<float> params = a.get_floats("activation_params");
  RECUR_RETURN_IF_ERROR(a.status());
  if (act.empty()) return ok_status();
  const ActivationForm* form = find_activation(act);
  if (!form) return unknown_activation(l, act);
  if (static_cast<int>(params.size()) != form->params) {
    return l.error("activation " + act + " takes " + std::to_string(form->params) +
                   " activation_params, the node has " + std::to_string(params.size()));
  }
  ActivationParams p;
  if (!params.empty()) p.alpha = params[0];
  if (params.size() > 1) p.beta = params[1];
  return lower_activation(l, act, p, x, y, t);
}

}  // namespace lowering

Status lower_contrib_ops(Graph& graph, const std::function<Status(Graph&)>& infer) {
  RECUR_ASSIGN_OR_RETURN(const lowering::NchwcPlan nchwc, lowering::prepare_nchwc(graph));
  // Each round lowers at least one node, or is the last.
  for (bool last = false;;) {
    Round round;
    round.nchwc = &nchwc;
    round.last = last;
    RECUR_RETURN_IF_ERROR(lower_round(graph, round));
    if (round.lowered) RECUR_RETURN_IF_ERROR(infer(graph));
    if (!round.deferred || last) return ok_status();
    last = !round.lowered;
  }
}

}  // namespace recur
