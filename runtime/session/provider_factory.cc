#include "runtime/session/provider_factory.h"

#include "providers/reference/reference_provider.h"
#if RECUR_HAVE_CUDA
#include "providers/cuda/cuda_provider.h"
#endif
#if RECUR_HAVE_ONEDNN
#include "providers/onednn/onednn_provider.h"
#endif

namespace recur {

const std::vector<ProviderFactory>& builtin_providers() {
  static const std::vector<ProviderFactory> factories = [] {
    std::vector<ProviderFactory> f;
#if RECUR_HAVE_CUDA
    f.push_back({"cudnn", make_cudnn_provider});
    f.push_back({"cuda-generic", make_cuda_generic_provider});
#endif
#if RECUR_HAVE_ONEDNN
    f.push_back({"onednn", make_onednn_provider});
#endif
    f.push_back({"reference", make_reference_provider});
    return f;
  }();
  return factories;
}

}  // namespace recur
