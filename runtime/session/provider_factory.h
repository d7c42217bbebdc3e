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

}  // namespace recur
