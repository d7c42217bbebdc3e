// The reference provider: every operator, in plain loops. The oracle for the other providers
// and the last fallback.
#pragma once

#include <memory>

#include "runtime/provider/execution_provider.h"

namespace recur {

std::unique_ptr<ExecutionProvider> make_reference_provider();

}  // namespace recur
