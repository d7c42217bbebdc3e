#include "providers/onednn/rnn/rnn_bf16.h"

#include <cstring>
#include <sstream>

#include <dnnl.hpp>

namespace recur::onednn::rnn {

namespace {

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    default:
      return nullptr;
  }
}

}  // namespace

std::string bf16_unsupported_reason() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  // The ISA values are cumulative bit sets: avx512_core_amx contains avx512_core_bf16's bits.
  const auto need = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  if ((static_cast<unsigned>(isa) & need) == need) return {};
  std::ostringstream os;
  os << "the CPU has no native bf16 (oneDNN ISA ";
  if (const char* name = isa_name(isa))
    os << name;
  else
    os << "0x" << std::hex << static_cast<unsigned>(isa);
  os << ", bf16 needs avx512_core_bf16 or AMX)";
  return os.str();
}

void f32_to_bf16(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &src[i], sizeof(u));
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
    dst[i] = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : (rounded >> 16));
  }
}

void bf16_to_f32(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(&dst[i], &u, sizeof(u));
  }
}

}  // namespace recur::onednn::rnn
