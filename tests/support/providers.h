// Which providers this build has and can run here, for tests that skip without one.
#pragma once

#include <string>

#include "recur/recur.h"
#include "runtime/core/cpu_isa.h"

namespace recur::testing {

// Whether this build has the provider `name` and it is available on this machine.
inline bool have_provider(const std::string& name) {
  for (const auto& p : list_providers())
    if (p.name == name) return p.available;
  return false;
}

// Whether the oneDNN provider is here and the CPU has AVX-512: what its own loops (small
// operations, Transpose, the reductions, channel-blocked chains) need.
inline bool have_onednn_avx512() {
  return have_provider("onednn") && cpu::has(cpu::Feature::kAvx512);
}

// Whether the oneDNN provider runs int8 LSTMs here: oneDNN's uint8 x int8 products are exact only
// with VNNI (without it they saturate in int16, and the provider declines).
inline bool have_onednn_int8() { return have_provider("onednn") && cpu::has(cpu::Feature::kVnni); }

}  // namespace recur::testing
