#include "providers/reference/kernels.h"

namespace recur::reference {

void register_control_kernels(KernelRegistry& r) {}

}  // namespace recur::reference
