// Which providers this build has and can run here, for tests that skip without one.
#pragma once

#include <string>

#include "recur/recur.h"

namespace recur::testing {

// Whether this build has the provider `name` and it is available on this machine.
inline bool have_provider(const std::string& name) {
  for (const auto& p : list_providers())
    if (p.name == name) return p.available;
  return false;
}

// Whether the oneDNN provider is here and the CPU has AVX-512: what its own loops (small
// operations, Transpose, the binary operators, channel-blocked chains) need.
inline bool have_onednn_avx512() {
  return have_provider("onednn") && __builtin_cpu_supports("avx512f");
}

}  // namespace recur::testing
