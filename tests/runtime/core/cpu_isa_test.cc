#include "runtime/core/cpu_isa.h"

#include <gtest/gtest.h>

#include <cstdlib>

#if defined(RECUR_HAVE_ONEDNN)
#include <dnnl.hpp>
#endif

namespace recur::cpu {
namespace {

constexpr unsigned bit(Feature f) { return static_cast<unsigned>(f); }

// oneDNN 2.6's names for ONEDNN_MAX_CPU_ISA, compared as it compares them (strcmp).
TEST(CpuIsa, CapsAsOnednnReadsThem) {
  const unsigned avx2 = bit(Feature::kAvx2), avx512 = bit(Feature::kAvx512);
  const unsigned vnni = bit(Feature::kVnni), bf16 = bit(Feature::kAvx512Bf16);
  const unsigned all = avx2 | avx512 | vnni | bf16;
  EXPECT_EQ(allowed_by(nullptr), all);
  EXPECT_EQ(allowed_by("ALL"), all);
  EXPECT_EQ(allowed_by("SSE41"), 0u);
  EXPECT_EQ(allowed_by("AVX"), 0u);
  EXPECT_EQ(allowed_by("AVX2"), avx2);
  EXPECT_EQ(allowed_by("AVX2_VNNI"), avx2 | vnni);
  EXPECT_EQ(allowed_by("AVX512_CORE"), avx2 | avx512);
  EXPECT_EQ(allowed_by("AVX512_CORE_VNNI"), avx2 | avx512 | vnni);
  EXPECT_EQ(allowed_by("AVX512_CORE_BF16"), all);
  EXPECT_EQ(allowed_by("AVX512_CORE_AMX"), all);
  // oneDNN's AVX512_MIC caps its primitives below avx512_core, which recur's loops follow.
  EXPECT_EQ(allowed_by("AVX512_MIC"), avx2);
  // Names oneDNN does not know leave it uncapped, and so recur.
  EXPECT_EQ(allowed_by("avx2"), all);
  EXPECT_EQ(allowed_by("AVX3"), all);
  EXPECT_EQ(allowed_by(""), all);
}

TEST(CpuIsa, ReasonsNameTheCapOrTheProcessor) {
  for (Feature f : {Feature::kAvx2, Feature::kAvx512, Feature::kVnni, Feature::kAvx512Bf16}) {
    const std::string why = why_not(f);
    EXPECT_EQ(why.empty(), has(f)) << why;
    if (!why.empty()) {
      const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
      if (cap == nullptr || *cap == '\0') cap = std::getenv("DNNL_MAX_CPU_ISA");
      const bool named = why.find("MAX_CPU_ISA=") != std::string::npos;
      const bool processor = why.rfind("this processor has no ", 0) == 0;
      EXPECT_TRUE(named || processor) << why;
      if (named) {
        EXPECT_NE(cap, nullptr) << why;
      }
    }
  }
}

#if defined(RECUR_HAVE_ONEDNN)
// recur's loops and oneDNN's primitives move together under ONEDNN_MAX_CPU_ISA: the test runs
// uncapped and again under AVX2 (tests/CMakeLists.txt, isa-avx2/).
TEST(CpuIsa, AgreesWithOnednnsEffectiveIsa) {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto contains = [&](dnnl::cpu_isa i) {
    const auto b = static_cast<unsigned>(i);
    return (isa & b) == b;
  };
  EXPECT_EQ(has(Feature::kAvx2), contains(dnnl::cpu_isa::avx2));
  EXPECT_EQ(has(Feature::kAvx512), contains(dnnl::cpu_isa::avx512_core));
  EXPECT_EQ(has(Feature::kVnni),
            contains(dnnl::cpu_isa::avx512_core_vnni) || contains(dnnl::cpu_isa::avx2_vnni));
  EXPECT_EQ(has(Feature::kAvx512Bf16), contains(dnnl::cpu_isa::avx512_core_bf16));
}
#endif

}  // namespace
}  // namespace recur::cpu
