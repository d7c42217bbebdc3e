#include "providers/reference/kernels.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

void register_math_kernels(Registrar& r) {
  register_binary_arithmetic(r);
  register_unary(r);
  register_activation(r);
  register_comparison(r);
  register_logical(r);
  register_mod(r);
  register_bit_shift(r);
  register_bitwise(r);
  register_pow(r);
  register_prelu(r);
  register_variadic(r);
  register_where(r);
  register_clip(r);
  register_cast(r);
  register_softmax(r);
  register_det(r);
  register_inverse(r);
}

}  // namespace recur::reference
