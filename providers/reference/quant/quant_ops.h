// Registration functions of quant/.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_quantize_linear(KernelRegistry& r);
void register_dequantize_linear(KernelRegistry& r);
void register_dynamic_quantize_linear(KernelRegistry& r);
void register_matmul_integer(KernelRegistry& r);
void register_conv_integer(KernelRegistry& r);
void register_qlinear_matmul(KernelRegistry& r);
void register_qlinear_conv(KernelRegistry& r);

}  // namespace recur::reference
