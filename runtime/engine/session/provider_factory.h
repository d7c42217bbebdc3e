// The providers compiled into this build, in default priority order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/provider/execution_provider.h"

namespace recur {

struct ProviderFactory {
  std::string name;
  std::function<std::unique_ptr<ExecutionProvider>()> make;
};

// cudnn, cuda-generic (CUDA builds), onednn (oneDNN builds), reference.
const std::vector<ProviderFactory>& builtin_providers();

// For a provider of the project that this build does not include (cudnn and cuda-generic
// without CUDA, onednn without oneDNN): a stand-in that is never available and declines every
// node, saying so. nullptr for any other name.
std::unique_ptr<ExecutionProvider> make_absent_provider(const std::string& name);

}  // namespace recur
