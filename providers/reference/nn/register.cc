#include "providers/reference/kernels.h"

namespace recur::reference {

void register_nn_kernels(KernelRegistry& r) {}

}  // namespace recur::reference
