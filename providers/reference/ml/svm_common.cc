#include "providers/reference/ml/svm_common.h"

#include <cmath>
#include <string>
#include <vector>

#include "providers/reference/common/util.h"

namespace recur::reference::ml {

float SvmKernel::operator()(const float* a, const float* b, int64_t n) const {
  double sum = 0;
  if (type == Type::kRbf) {
    for (int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(a[i]) - b[i];
      sum += d * d;
    }
    return std::exp(-gamma * static_cast<float>(sum));
  }
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  const auto dot = static_cast<float>(sum);
  switch (type) {
    case Type::kPoly:
      return std::pow(gamma * dot + coef0, degree);
    case Type::kSigmoid:
      return std::tanh(gamma * dot + coef0);
    default:
      return dot;
  }
}

Result<SvmKernel> read_svm_kernel(const Node& node) {
  AttrReader attrs(node);
  const std::string type = attrs.get_string("kernel_type", "LINEAR");
  const std::vector<float> params = attrs.get_floats("kernel_params");
  RECUR_RETURN_IF_ERROR(attrs.status());
  SvmKernel k;
  if (type == "LINEAR") {
    k.type = SvmKernel::Type::kLinear;
  } else if (type == "POLY") {
    k.type = SvmKernel::Type::kPoly;
  } else if (type == "RBF") {
    k.type = SvmKernel::Type::kRbf;
  } else if (type == "SIGMOID") {
    k.type = SvmKernel::Type::kSigmoid;
  } else {
    return invalid_model(node.describe() + ": kernel_type '" + type +
                         "' is not one of LINEAR, POLY, RBF, SIGMOID");
  }
  if (!params.empty() && params.size() != 3) {
    return invalid_model(node.describe() + ": kernel_params has " + std::to_string(params.size()) +
                         " values; it holds gamma, coef0 and degree");
  }
  if (!params.empty()) {
    k.gamma = params[0];
    k.coef0 = params[1];
    k.degree = params[2];
  }
  return k;
}

}  // namespace recur::reference::ml
