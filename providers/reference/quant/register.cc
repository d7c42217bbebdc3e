#include "providers/reference/kernels.h"
#include "providers/reference/quant/quant_ops.h"

namespace recur::reference {

void register_quant_kernels(Registrar& r) {
  register_quantize_linear(r);
  register_dequantize_linear(r);
  register_dynamic_quantize_linear(r);
  register_matmul_integer(r);
  register_conv_integer(r);
  register_qlinear_matmul(r);
  register_qlinear_conv(r);
  register_dynamic_quantize_lstm(r);
}

}  // namespace recur::reference
