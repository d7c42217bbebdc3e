#include "providers/reference/kernels.h"

namespace recur::reference {

void register_reduce_kernels(KernelRegistry& r) {}

}  // namespace recur::reference
