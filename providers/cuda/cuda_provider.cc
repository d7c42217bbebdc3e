#include "providers/cuda/cuda_provider.h"

#include "providers/cuda/cuda_context.h"
#include "providers/cuda/ops/gpu_kernel.h"
#include "providers/cuda/rnn/cudnn_rnn.h"
#include "providers/cuda/rnn/generic_rnn.h"

namespace recur {

namespace {

Result<bool> parse_bool(const std::string& provider, const std::string& key, const std::string& v) {
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  return invalid_argument("setting '" + provider + "." + key + "' must be 0 or 1, got '" + v + "'");
}

class CudaProviderBase : public ExecutionProvider {
 public:
  explicit CudaProviderBase(std::string name)
      : ExecutionProvider(std::move(name), Device::cuda(0)) {
    cuda::install_device_memory_hooks();
  }

  bool available(std::string* reason) const override {
    return cuda::device_available(device().index, reason);
  }

  Status configure(const ProviderConfig& config) override {
    for (const auto& [key, value] : config.settings) {
      if (key == "device") {
        int index = -1;
        try {
          size_t used = 0;
          index = std::stoi(value, &used);
          if (used != value.size()) index = -1;
        } catch (const std::exception&) {
          index = -1;
        }
        if (index < 0) {
          return invalid_argument("setting '" + name() + ".device' must be a device index, got '" +
                                  value + "'");
        }
        set_device(Device::cuda(index));
      } else if (!accepts_setting(key)) {
        return invalid_argument("provider '" + name() + "' has no setting '" + key + "'" +
                                settings_help());
      } else if (!(name() == "cuda-generic" && key == "persistent" && value == "auto")) {
        RECUR_RETURN_IF_ERROR(parse_bool(name(), key, value).status());
      }
    }
    config_ = config;
    return ok_status();
  }

  std::unique_ptr<ProviderRunState> begin_run() const override {
    // A session lists every provider; one with no device, or no node, costs nothing.
    if (!has_kernels_ || !available(nullptr)) return nullptr;
    return std::make_unique<cuda::CudaRunState>(device().index);
  }

  Status end_run(ProviderRunState* state) const override {
    if (!state) return ok_status();
    auto* s = static_cast<cuda::CudaRunState*>(state);
    return s->finish().with_context(name() + " on " + device().to_string());
  }

  std::unique_ptr<RunRecorder> make_recorder() const override {
    return cuda::make_cuda_recorder(device().index);
  }

 protected:
  virtual bool accepts_setting(const std::string& key) const { return false; }
  virtual std::string settings_help() const { return " (it has: device)"; }
  bool has_kernels_ = false;
};

class CudnnProvider final : public CudaProviderBase {
 public:
  CudnnProvider() : CudaProviderBase("cudnn") {
    cuda::register_cudnn_rnn_kernels(mutable_registry());
    has_kernels_ = true;
  }

 protected:
  bool accepts_setting(const std::string& key) const override {
    return key == "tf32" || key == "persistent";
  }
  std::string settings_help() const override { return " (it has: device, tf32, persistent)"; }
};

// Everything cuDNN's RNN cannot express, and the glue around it: the generic RNN kernel
// (every ONNX attribute), cuBLAS MatMul/Gemm, cuDNN Conv and pooling, and CUDA kernels for
// the elementwise, data movement, reduction and normalization operators.
class CudaGenericProvider final : public CudaProviderBase {
 public:
  CudaGenericProvider() : CudaProviderBase("cuda-generic") {
    KernelRegistry& r = mutable_registry();
    cuda::register_generic_rnn_kernels(r);
    cuda::ops::register_elementwise_kernels(r);
    cuda::ops::register_movement_kernels(r);
    cuda::ops::register_reduce_kernels(r);
    cuda::ops::register_blas_kernels(r);
    cuda::ops::register_cudnn_op_kernels(r);
    has_kernels_ = true;
  }

 protected:
  bool accepts_setting(const std::string& key) const override { return key == "persistent"; }
  std::string settings_help() const override { return " (it has: device, persistent)"; }
};

}  // namespace

std::unique_ptr<ExecutionProvider> make_cudnn_provider() {
  return std::make_unique<CudnnProvider>();
}

std::unique_ptr<ExecutionProvider> make_cuda_generic_provider() {
  return std::make_unique<CudaGenericProvider>();
}

}  // namespace recur
