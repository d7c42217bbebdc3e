// Registration functions of math/.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_binary_arithmetic(Registrar& r);  // Add, Sub, Mul, Div
void register_unary(Registrar& r);              // Relu, Exp, Sin, IsNaN, Not, ...
void register_activation(Registrar& r);         // Elu, Selu, LeakyRelu, Shrink, ...
void register_comparison(Registrar& r);         // Equal, Less, Greater, ...
void register_logical(Registrar& r);            // And, Or, Xor
void register_mod(Registrar& r);                // Mod
void register_bit_shift(Registrar& r);          // BitShift
void register_bitwise(Registrar& r);            // BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot
void register_pow(Registrar& r);                // Pow
void register_prelu(Registrar& r);              // PRelu
void register_variadic(Registrar& r);           // Min, Max, Sum, Mean
void register_where(Registrar& r);              // Where
void register_clip(Registrar& r);               // Clip
void register_cast(Registrar& r);               // Cast, CastLike
void register_softmax(Registrar& r);            // Softmax, LogSoftmax, Hardmax
void register_det(Registrar& r);                // Det
void register_inverse(Registrar& r);            // com.microsoft::Inverse

}  // namespace recur::reference
