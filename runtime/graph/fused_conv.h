// recur::FusedConv, the internal node that runtime/engine/optimize's Conv fusion makes from an
// ONNX Conv and the Relu, LeakyRelu, Sigmoid or HardSwish that alone reads its output: oneDNN runs
// the activation as a post-op of the convolution, in the same pass over the output, instead of as
// a second primitive over a tensor that has left the cache.
//
//   inputs, outputs and attributes: the Conv's, its output being the activation's; plus
//   activation, a string: "Relu", "LeakyRelu", "Sigmoid" or "HardSwish";
//   activation_alpha, a float: LeakyRelu's alpha (absent: 0.01, LeakyRelu's default).
#pragma once

#include <string_view>

namespace recur {

inline constexpr const char* kFusedConvDomain = "recur";
inline constexpr const char* kFusedConvOp = "FusedConv";
inline constexpr const char* kFusedConvActivation = "activation";
inline constexpr const char* kFusedConvAlpha = "activation_alpha";

// The activations a FusedConv may carry.
inline bool fusable_conv_activation(std::string_view op) {
  return op == "Relu" || op == "LeakyRelu" || op == "Sigmoid" || op == "HardSwish";
}

}  // namespace recur
