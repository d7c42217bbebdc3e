// Registration functions of math/.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_binary_arithmetic(KernelRegistry& r);  // Add, Sub, Mul, Div
void register_unary(KernelRegistry& r);              // Relu, Exp, Sin, IsNaN, Not, ...
void register_activation(KernelRegistry& r);         // Elu, Selu, LeakyRelu, Shrink, ...
void register_comparison(KernelRegistry& r);         // Equal, Less, Greater, ...
void register_logical(KernelRegistry& r);            // And, Or, Xor
void register_mod(KernelRegistry& r);                // Mod
void register_bit_shift(KernelRegistry& r);          // BitShift
void register_pow(KernelRegistry& r);                // Pow
void register_prelu(KernelRegistry& r);              // PRelu
void register_variadic(KernelRegistry& r);           // Min, Max, Sum, Mean
void register_where(KernelRegistry& r);              // Where
void register_clip(KernelRegistry& r);               // Clip
void register_cast(KernelRegistry& r);               // Cast, CastLike
void register_softmax(KernelRegistry& r);            // Softmax, LogSoftmax, Hardmax
void register_det(KernelRegistry& r);                // Det

}  // namespace recur::reference
