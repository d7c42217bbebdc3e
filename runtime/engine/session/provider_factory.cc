#include "runtime/engine/session/provider_factory.h"

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
    f.push_back({"reference", [] { return make_reference_provider(); }});
    return f;
  }();
  return factories;
}

namespace {

class AbsentProvider final : public ExecutionProvider {
 public:
  AbsentProvider(std::string name, Device device, std::string why)
      : ExecutionProvider(std::move(name), device), why_(std::move(why)) {}
  bool available(std::string* reason) const override {
    if (reason) *reason = why_;
    return false;
  }
  Claim claim(const Node&, const Graph&) const override { return Claim::decline(why_); }

 private:
  std::string why_;
};

}  // namespace

std::unique_ptr<ExecutionProvider> make_absent_provider(const std::string& name) {
  if (name == "cudnn" || name == "cuda-generic") {
    return std::make_unique<AbsentProvider>(name, Device::cuda(0),
                                            "not in this build (configured without CUDA)");
  }
  if (name == "onednn") {
    return std::make_unique<AbsentProvider>(name, Device::cpu(),
                                            "not in this build (configured without oneDNN)");
  }
  return nullptr;
}

}  // namespace recur
