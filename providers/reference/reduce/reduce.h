// Registration functions of reduce/.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_reduce(KernelRegistry& r);   // ReduceSum, ReduceMean, ReduceMax, ...
void register_arg_max(KernelRegistry& r);  // ArgMax, ArgMin
void register_cum_sum(KernelRegistry& r);  // CumSum

}  // namespace recur::reference
