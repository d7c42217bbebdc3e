// Registration functions of math/.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_binary_arithmetic(KernelRegistry& r);  // Add, Sub, Mul, Div

}  // namespace recur::reference
