#include "providers/reference/control/control_ops.h"
#include "providers/reference/kernels.h"

namespace recur::reference {

void register_control_kernels(Registrar& r) {
  register_if(r);
  register_loop(r);
  register_scan(r);
}

}  // namespace recur::reference
