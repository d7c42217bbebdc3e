#include "runtime/engine/session/provider_factory.h"

#include "providers/reference/reference_provider.h"
#if RECUR_HAVE_CUDA
#include "runtime/engine/session/cuda_module.h"
#endif
#if RECUR_HAVE_ONEDNN
#include "providers/onednn/onednn_provider.h"
#endif

namespace recur {

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

#if RECUR_HAVE_CUDA
// The GPU providers live in librecur_cuda.so: a build with CUDA lists them always, and where
// the module cannot be opened they take part as absent, with dlopen's reason.
std::unique_ptr<ExecutionProvider> make_gpu_provider(const std::string& name) {
  std::string why;
  if (auto p = make_cuda_module_provider(name, &why)) return p;
  return std::make_unique<AbsentProvider>(name, Device::cuda(0), why);
}
#endif

}  // namespace

const std::vector<ProviderFactory>& builtin_providers() {
  static const std::vector<ProviderFactory> factories = [] {
    std::vector<ProviderFactory> f;
#if RECUR_HAVE_CUDA
    f.push_back({"cudnn", [] { return make_gpu_provider("cudnn"); }});
    f.push_back({"cuda-generic", [] { return make_gpu_provider("cuda-generic"); }});
#endif
#if RECUR_HAVE_ONEDNN
    f.push_back({"onednn", make_onednn_provider});
#endif
    f.push_back({"reference", [] { return make_reference_provider(); }});
    return f;
  }();
  return factories;
}

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
