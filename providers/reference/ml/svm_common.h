// What SVMClassifier and SVMRegressor share: the kernel (kernel_type and kernel_params) and its
// value for one pair of rows.
#pragma once

#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur::reference::ml {

struct SvmKernel {
  enum class Type { kLinear, kPoly, kRbf, kSigmoid };
  Type type = Type::kLinear;
  // kernel_params [gamma, coef0, degree]. Absent, all three are 0, as in the ONNX reference
  // implementation (ONNX Runtime refuses a model without them). degree stays a float, as in ONNX
  // Runtime: POLY is pow(gamma * a.b + coef0, degree), NaN for a negative base and a fractional
  // degree.
  float gamma = 0, coef0 = 0, degree = 0;

  // LINEAR a.b, POLY (gamma a.b + coef0)^degree, RBF exp(-gamma |a - b|^2),
  // SIGMOID tanh(gamma a.b + coef0); sums in double.
  float operator()(const float* a, const float* b, int64_t n) const;
};

// kernel_type (LINEAR where absent) and kernel_params; anything else is refused, naming the node.
Result<SvmKernel> read_svm_kernel(const Node& node);

}  // namespace recur::reference::ml
