// One registration function per category of operators; register_kernels() calls them all.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_kernels(Registrar& r);

void register_rnn_kernels(Registrar& r);       // rnn/: LSTM, GRU, RNN
void register_math_kernels(Registrar& r);      // math/: elementwise, activations
void register_tensor_kernels(Registrar& r);    // tensor/: shape and data movement
void register_nn_kernels(Registrar& r);        // nn/: MatMul, Gemm, Conv, pooling, ...
void register_reduce_kernels(Registrar& r);    // reduce/: reductions, ArgMax, CumSum
void register_control_kernels(Registrar& r);   // control/: If, Loop, Scan
void register_quant_kernels(Registrar& r);     // quant/: QuantizeLinear, ...
void register_sequence_kernels(Registrar& r);  // sequence/: Sequence*, SplitToSequence
void register_text_kernels(Registrar& r);      // text/: StringNormalizer, TfIdfVectorizer
void register_signal_kernels(Registrar& r);    // signal/: DFT, STFT, windows
void register_training_kernels(Registrar& r);  // training/: Adagrad, Adam, Momentum
void register_ml_kernels(Registrar& r);        // ml/: the ai.onnx.ml operators
void register_random_kernels(Registrar& r);    // random/: RandomNormal, Bernoulli, ...

}  // namespace recur::reference
