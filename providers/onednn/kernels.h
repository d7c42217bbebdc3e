// One registration function per category of operators; register_kernels() calls them all.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::onednn {

void register_kernels(KernelRegistry& r);

void register_rnn_kernels(KernelRegistry& r);     // rnn/: LSTM, GRU, RNN
void register_nn_kernels(KernelRegistry& r);      // nn/: MatMul, Gemm, Conv, ConvTranspose,
                                                  // Einsum, normalizations, pooling, Resize,
                                                  // Softmax
void register_math_kernels(KernelRegistry& r);    // math/: eltwise activations, Erf, Sin, Cos
void register_erf(KernelRegistry& r);             // math/erf.cc (register_math_kernels calls it)
void register_sin(KernelRegistry& r);             // math/sin.cc (likewise)
void register_cos(KernelRegistry& r);             // math/cos.cc (likewise)
void register_hard_sigmoid(KernelRegistry& r);    // math/hard_sigmoid.cc (likewise)
void register_binary(KernelRegistry& r);          // math/binary.cc: Add, Sub, Mul, Div (likewise)
void register_reduce_kernels(KernelRegistry& r);  // reduce/: ArgMax, ArgMin, ReduceSum/Mean/Max/Min
void register_reduce(KernelRegistry& r);          // reduce/reduce.cc (the above calls it)
void register_top_k(KernelRegistry& r);           // tensor/top_k.cc: TopK
void register_transpose(KernelRegistry& r);       // tensor/transpose.cc: Transpose
void register_to_blocked(KernelRegistry& r);      // tensor/to_blocked.cc: recur::ToBlocked
void register_from_blocked(KernelRegistry& r);    // tensor/from_blocked.cc: recur::FromBlocked

}  // namespace recur::onednn
