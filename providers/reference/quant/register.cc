#include "providers/reference/kernels.h"

namespace recur::reference {

void register_quant_kernels(KernelRegistry& r) {}

}  // namespace recur::reference
