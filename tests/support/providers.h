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

}  // namespace recur::testing
