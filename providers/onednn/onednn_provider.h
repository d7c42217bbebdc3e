// The oneDNN CPU provider: oneDNN's fused RNN primitives (LSTM, GRU, LBR-GRU, vanilla RNN)
// and MatMul, Gemm, Conv, ConvTranspose, Layer- and BatchNormalization, pooling, eltwise and
// softmax, so that whole models stay on it.
#pragma once

#include <memory>

#include "runtime/provider/execution_provider.h"

namespace recur {

std::unique_ptr<ExecutionProvider> make_onednn_provider();

}  // namespace recur
