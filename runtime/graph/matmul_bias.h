// recur::MatMulBias, the internal node that runtime/engine/optimize's MatMul fusion makes from a
// MatMul by a constant 2-D B, the Add of a constant bias over the product's last axis that alone
// reads it, and the Relu, Gelu or SiLU that alone reads the sum, where there is one: oneDNN adds
// the bias and applies the activation as the product is written (the matmul primitive's bias and an
// eltwise post-op) instead of in passes of their own. PyTorch writes nn.Linear over a batch of
// sequences this way, and recur's lowering of ONNX Runtime's Attention and BiasGelu does too.
//
//   inputs: A [..., K], B (constant, [K, N]), bias (constant, N values); output: the last
//   fused node's;
//   activation, a string: "" (none), "Relu", "Gelu" (erf), "GeluTanh" (Gelu's tanh form) or
//   "Silu" (x * sigmoid(x): Swish of alpha 1, as fuse_swish.cc writes nn.SiLU).
#pragma once

#include <string_view>

namespace recur {

inline constexpr const char* kMatMulBiasDomain = "recur";
inline constexpr const char* kMatMulBiasOp = "MatMulBias";
inline constexpr const char* kMatMulBiasActivation = "activation";

inline bool known_matmul_bias_activation(std::string_view act) {
  return act.empty() || act == "Relu" || act == "Gelu" || act == "GeluTanh" || act == "Silu";
}

}  // namespace recur
