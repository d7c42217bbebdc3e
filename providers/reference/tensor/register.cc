#include "providers/reference/kernels.h"
#include "providers/reference/tensor/tensor_ops.h"

namespace recur::reference {

void register_tensor_kernels(KernelRegistry& r) {
  register_identity(r);
  register_constant(r);
}

}  // namespace recur::reference
