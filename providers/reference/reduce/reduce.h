// Registration functions of reduce/.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_reduce(Registrar& r);    // ReduceSum, ReduceMean, ReduceMax, ...
void register_arg_max(Registrar& r);   // ArgMax, ArgMin
void register_cum_sum(Registrar& r);   // CumSum
void register_cum_prod(Registrar& r);  // CumProd

}  // namespace recur::reference
