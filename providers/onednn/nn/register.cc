#include "providers/onednn/kernels.h"

namespace recur::onednn {

void register_nn_kernels(KernelRegistry& r) {}

}  // namespace recur::onednn
