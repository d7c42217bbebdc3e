// int8 LSTM on oneDNN: a plain LSTM under cpu_precision int8 (weights quantized at load) and
// com.microsoft::DynamicQuantizeLSTM (weights quantized in the model). Kept apart from the
// float32 kernel (rnn_kernel.h): it runs one primitive per direction over the whole batch.
//
// oneDNN 2.6's int8 LSTM takes uint8 X and h with one scale and shift for both, and int8
// weights with one scale per output channel shared by W and R. h lies in [-1, 1], so the
// activations are fixed to u8 = 127*v + 128; X is brought into that range per run: centred on
// the middle o of its range and divided by its half-width m, with W*m quantized in its place
// and o*rowsum(W) added to the bias. m is rounded up to a quarter octave so that the packed
// weights (which depend on m) are reused across runs. With more threads, the directions run
// side by side, and within a direction the batch is sliced into one-thread primitives, or
// with onednn.threading=omp the threads share one primitive (docs/precision.md, "int8").
#pragma once

#include <memory>
#include <string>

#include "runtime/provider/execution_provider.h"
#include "runtime/provider/kernel.h"

namespace recur::onednn {

// Why the LSTM node of `ctx` cannot run in int8 on oneDNN, or "" when it can.
std::string int8_lstm_unsupported(const CompileContext& ctx);

// The int8 kernel for an LSTM node (cpu_precision int8) that int8_lstm_unsupported accepts.
Result<std::unique_ptr<Kernel>> create_int8_lstm_kernel(CompileContext& ctx);

// com.microsoft::DynamicQuantizeLSTM: the claim and the kernel (dequantized weights
// requantized with the shared per-channel scales oneDNN takes).
Claim claim_quantized_lstm(const Node& node, const Graph& graph);
Result<std::unique_ptr<Kernel>> create_quantized_lstm_kernel(CompileContext& ctx);

}  // namespace recur::onednn
