#include "providers/onednn/kernels.h"

namespace recur::onednn {

void register_math_kernels(KernelRegistry& r) {}

}  // namespace recur::onednn
