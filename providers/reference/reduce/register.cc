#include "providers/reference/kernels.h"
#include "providers/reference/reduce/reduce.h"

namespace recur::reference {

void register_reduce_kernels(Registrar& r) {
  register_reduce(r);
  register_arg_max(r);
  register_cum_sum(r);
  register_cum_prod(r);
}

}  // namespace recur::reference
