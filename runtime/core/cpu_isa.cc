#include "runtime/core/cpu_isa.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>

namespace recur::cpu {

namespace {

constexpr unsigned bit(Feature f) { return static_cast<unsigned>(f); }

constexpr unsigned kAll =
    bit(Feature::kAvx2) | bit(Feature::kAvx512) | bit(Feature::kVnni) | bit(Feature::kAvx512Bf16);

// AVX-VNNI, the VEX form (CPUID.(EAX=7,ECX=1):EAX[4]), which clang 14's __builtin_cpu_supports
// does not name.
bool has_avx_vnni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d) == 0) return false;
  return (a & (1u << 4)) != 0 && __builtin_cpu_supports("avx2");
}

unsigned processor_features() {
  unsigned f = 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f |= bit(Feature::kAvx2);
  if (__builtin_cpu_supports("avx512f")) f |= bit(Feature::kAvx512);
  if (__builtin_cpu_supports("avx512vnni") || has_avx_vnni()) f |= bit(Feature::kVnni);
  if (__builtin_cpu_supports("avx512bf16")) f |= bit(Feature::kAvx512Bf16);
  return f;
}

// oneDNN reads ONEDNN_ before DNNL_; an empty value counts as unset, as there.
const char* cap_variable(const char** name) {
  for (const char* n : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    const char* v = std::getenv(n);
    if (v && *v) {
      *name = n;
      return v;
    }
  }
  return nullptr;
}

struct State {
  unsigned features = 0;
  bool avx_vnni = false;  // the VEX form, which a cap below AVX-512 still allows
  unsigned allowed = kAll;
  std::string cap;  // "NAME=VALUE" where a known cap is set
};

const State& state() {
  static const State s = [] {
    State st;
    st.features = processor_features();
    st.avx_vnni = has_avx_vnni();
    const char* name = nullptr;
    const char* value = cap_variable(&name);
    st.allowed = allowed_by(value);
    if (value && st.allowed != kAll) st.cap = std::string(name) + "=" + value;
    return st;
  }();
  return s;
}

const char* feature_name(Feature f) {
  switch (f) {
    case Feature::kAvx2:
      return "AVX2";
    case Feature::kAvx512:
      return "AVX-512";
    case Feature::kVnni:
      return "VNNI";
    case Feature::kAvx512Bf16:
      return "AVX512_BF16";
  }
  return "?";
}

}  // namespace

unsigned allowed_by(const char* cap) {
  if (cap == nullptr) return kAll;
  const unsigned avx2 = bit(Feature::kAvx2), avx512 = avx2 | bit(Feature::kAvx512);
  struct Level {
    const char* name;
    unsigned allowed;
  };
  static constexpr Level kLevels[] = {
      {"ALL", kAll},
      {"SSE41", 0},
      {"AVX", 0},
      {"AVX2", avx2},
      {"AVX2_VNNI", avx2 | bit(Feature::kVnni)},
      // Below avx512_core in oneDNN's order: its primitives run AVX2 code there.
      {"AVX512_MIC", avx2},
      {"AVX512_MIC_4OPS", avx2},
      {"AVX512_CORE", avx512},
      {"AVX512_CORE_VNNI", avx512 | bit(Feature::kVnni)},
      {"AVX512_CORE_BF16", kAll},
      {"AVX512_CORE_AMX", kAll},
  };
  for (const Level& l : kLevels)
    if (std::strcmp(cap, l.name) == 0) return l.allowed;
  return kAll;
}

bool has(Feature f) {
  const State& s = state();
  if ((s.features & s.allowed & bit(f)) == 0) return false;
  // Under AVX2_VNNI only AVX-VNNI counts: oneDNN's AVX2 code has no AVX-512 VNNI.
  if (f == Feature::kVnni && (s.allowed & bit(Feature::kAvx512)) == 0) return s.avx_vnni;
  return true;
}

std::string why_not(Feature f) {
  const State& s = state();
  if (has(f)) return "";
  if ((s.features & bit(f)) == 0) return std::string("this processor has no ") + feature_name(f);
  return s.cap + " leaves out " + feature_name(f);
}

}  // namespace recur::cpu
