// The instruction sets recur's own loops may use.
//
// What the processor has, capped as oneDNN caps its primitives: ONEDNN_MAX_CPU_ISA (or
// DNNL_MAX_CPU_ISA) set to AVX2 runs every loop of a session as on a processor without AVX-512,
// oneDNN's and recur's alike. One variable moves both, so that a machine with AVX-512 can run
// and test the paths a machine without it takes (the tests do: tests/CMakeLists.txt).
#pragma once

#include <string>

namespace recur::cpu {

enum class Feature : unsigned {
  kAvx2 = 1,        // AVX2 with FMA
  kAvx512 = 2,      // AVX-512F: recur's small kernels, channel blocks of 16
  kVnni = 4,        // AVX-512 VNNI or AVX-VNNI: exact uint8 x int8 products in oneDNN
  kAvx512Bf16 = 8,  // AVX512_BF16: native bf16 conversions
};

// Whether the processor has `f` and the cap allows it. Read once; the variables are not read
// again, as oneDNN reads its own once.
bool has(Feature f);

// Why not has(f): "" where it has, else a reason that names the cap where one is set.
std::string why_not(Feature f);

// The features a value of ONEDNN_MAX_CPU_ISA allows, as the bits of Feature: every one for
// nullptr or a value oneDNN does not know (it ignores those), none for SSE41 or AVX. The names
// are oneDNN 2.6's, upper case as it compares them.
unsigned allowed_by(const char* cap);

}  // namespace recur::cpu
