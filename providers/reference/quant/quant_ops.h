// Registration functions of quant/.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_quantize_linear(Registrar& r);
void register_dequantize_linear(Registrar& r);
void register_dynamic_quantize_linear(Registrar& r);
void register_matmul_integer(Registrar& r);
void register_conv_integer(Registrar& r);
void register_qlinear_matmul(Registrar& r);
void register_qlinear_conv(Registrar& r);
void register_dynamic_quantize_lstm(Registrar& r);  // com.microsoft

}  // namespace recur::reference
