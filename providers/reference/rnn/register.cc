#include "providers/reference/kernels.h"

namespace recur::reference {

void register_rnn_kernels(KernelRegistry& r) {}

}  // namespace recur::reference
