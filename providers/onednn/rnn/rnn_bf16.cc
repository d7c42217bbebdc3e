#include "providers/onednn/rnn/rnn_bf16.h"

#include <cstring>
#include <sstream>

#include <dnnl.hpp>

#include "runtime/core/cpu_isa.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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

namespace {

void f32_to_bf16_scalar(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &src[i], sizeof(u));
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
    dst[i] = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : (rounded >> 16));
  }
}

void bf16_to_f32_scalar(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(&dst[i], &u, sizeof(u));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The build targets generic x86-64, where the loops above vectorize to 128 bits only; the bf16
// path runs only on CPUs with AVX-512 BF16, so these use it outright. The conversions of X and
// Y took 7-13% of a bf16 run with the scalar loops (docs/precision.md). vcvtneps2bf16 rounds
// to nearest even like the scalar loop, but reads denormal inputs as zero.
__attribute__((target("avx512f,avx512bf16"))) void f32_to_bf16_avx512(const float* src,
                                                                      uint16_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh b = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), reinterpret_cast<const __m256i&>(b));
  }
  f32_to_bf16_scalar(src + i, dst + i, n - i);
}

__attribute__((target("avx512f"))) void bf16_to_f32_avx512(const uint16_t* src, float* dst,
                                                           size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    // The maskz forms: GCC 12 warns that the plain ones read an uninitialised register.
    const __m512i w = _mm512_maskz_cvtepu16_epi32(0xffff, h);
    _mm512_storeu_si512(dst + i, _mm512_maskz_slli_epi32(0xffff, w, 16));
  }
  bf16_to_f32_scalar(src + i, dst + i, n - i);
}

bool have_avx512_bf16() {
  static const bool yes = cpu::has(cpu::Feature::kAvx512Bf16);
  return yes;
}
#else
bool have_avx512_bf16() { return false; }
#endif

}  // namespace

void f32_to_bf16(const float* src, uint16_t* dst, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (have_avx512_bf16()) return f32_to_bf16_avx512(src, dst, n);
#endif
  f32_to_bf16_scalar(src, dst, n);
}

void bf16_to_f32(const uint16_t* src, float* dst, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (have_avx512_bf16()) return bf16_to_f32_avx512(src, dst, n);
#endif
  bf16_to_f32_scalar(src, dst, n);
}

}  // namespace recur::onednn::rnn
