#include "providers/reference/kernels.h"
#include "providers/reference/random/random_ops.h"

namespace recur::reference {

void register_random_kernels(Registrar& r) {
  register_random_normal(r);
  register_random_uniform(r);
  register_bernoulli(r);
  register_multinomial(r);
}

}  // namespace recur::reference
