// One registration function per category of operators; register_kernels() calls them all.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_kernels(KernelRegistry& r);

void register_rnn_kernels(KernelRegistry& r);       // rnn/: LSTM, GRU, RNN
void register_math_kernels(KernelRegistry& r);      // math/: elementwise, activations
void register_tensor_kernels(KernelRegistry& r);    // tensor/: shape and data movement
void register_nn_kernels(KernelRegistry& r);        // nn/: MatMul, Gemm, Conv, pooling, ...
void register_reduce_kernels(KernelRegistry& r);    // reduce/: reductions, ArgMax, CumSum
void register_control_kernels(KernelRegistry& r);   // control/: If, Loop, Scan
void register_quant_kernels(KernelRegistry& r);     // quant/: QuantizeLinear, ...
void register_sequence_kernels(KernelRegistry& r);  // sequence/: Sequence*, SplitToSequence
void register_text_kernels(KernelRegistry& r);      // text/: StringNormalizer, TfIdfVectorizer
void register_signal_kernels(KernelRegistry& r);    // signal/: DFT, STFT, windows
void register_training_kernels(KernelRegistry& r);  // training/: Adagrad, Adam, Momentum

}  // namespace recur::reference
