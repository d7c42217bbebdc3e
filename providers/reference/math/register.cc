#include "providers/reference/kernels.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

void register_math_kernels(KernelRegistry& r) { register_binary_arithmetic(r); }

}  // namespace recur::reference
