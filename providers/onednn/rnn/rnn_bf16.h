// The bf16 precision of the oneDNN RNN kernel (SessionOptions::cpu_precision, onednn.precision):
// whether the CPU runs bf16 natively, and the f32 <-> bf16 conversions of X, Y and the hidden
// states around the primitive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace recur::onednn::rnn {

// Empty when oneDNN's effective ISA computes bf16 natively (AVX-512 BF16 or AMX), else why
// not, naming the ISA. Emulated bf16 would be slower than fp32, so it is never taken.
std::string bf16_unsupported_reason();

// Round to nearest even, as the hardware's conversions do; NaN stays NaN.
void f32_to_bf16(const float* src, uint16_t* dst, size_t n);
void bf16_to_f32(const uint16_t* src, float* dst, size_t n);

}  // namespace recur::onednn::rnn
