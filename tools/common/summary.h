// A one-line description of a value: dtype, shape, and for host tensors min/max/mean and the
// first elements.
#pragma once

#include <string>

#include "recur/tensor.h"

namespace recur::tools {

std::string summarize(const Tensor& t);

}  // namespace recur::tools
