// Registration functions of tensor/.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_identity(KernelRegistry& r);
void register_constant(KernelRegistry& r);

}  // namespace recur::reference
