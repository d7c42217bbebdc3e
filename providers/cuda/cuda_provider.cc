#include "providers/cuda/cuda_provider.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "providers/cuda/cuda_context.h"
#include "providers/cuda/cuda_options.h"
#include "providers/cuda/ops/gpu_kernel.h"
#include "providers/cuda/rnn/cudnn_rnn.h"
#include "providers/cuda/rnn/generic_rnn.h"

namespace recur {

namespace {

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
    cuda::CudaOptions o;
    o.threads = config.threads;
    o.plan_only = config.plan_only;
    o.deterministic = config.deterministic;
    o.device = device().index;
    SettingsParser parser(name());
    parser.integer("device", 0, std::numeric_limits<int>::max(),
                   [&o](int64_t v) { o.device = static_cast<int>(v); });
    o.persistent = default_persistent();
    using P = cuda::CudaOptions::Persistent;
    std::vector<std::string> values = {"0", "1", "auto", "false", "true", "off", "on"};
    for (const std::string& v : more_persistent_values()) values.push_back(v);
    parser.choice("persistent", values, [&o](const std::string& v) {
      o.persistent = v == "auto"                            ? P::kAuto
                     : v == "1" || v == "true" || v == "on" ? P::kOn
                     : v == "small_h"                       ? P::kSmallH
                     : v == "static"                        ? P::kStatic
                     : v == "dynamic"                       ? P::kDynamic
                                                            : P::kOff;
    });
    add_settings(parser, o);
    RECUR_RETURN_IF_ERROR(parser.parse(config.settings));
    set_device(Device::cuda(o.device));
    options_ = o;
    listed_ = config.listed;
    return ok_status();
  }

  const ProviderOptions& options() const override { return options_; }

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
  // The provider's settings beyond device and persistent (0, 1 or auto).
  virtual void add_settings(SettingsParser& parser, cuda::CudaOptions& o) const = 0;
  virtual cuda::CudaOptions::Persistent default_persistent() const = 0;
  // Values of `persistent` beyond 0, 1 and auto that this provider takes.
  virtual std::vector<std::string> more_persistent_values() const { return {}; }
  bool has_kernels_ = false;
  std::vector<const ExecutionProvider*> listed_;  // ProviderConfig::listed

 private:
  cuda::CudaOptions options_;
};

class CudnnProvider final : public CudaProviderBase {
 public:
  CudnnProvider() : CudaProviderBase("cudnn") {
    static const std::shared_ptr<const KernelRegistry> registry =
        make_registry(cuda::register_cudnn_rnn_kernels);
    share_registry(registry);
    has_kernels_ = true;
  }

 protected:
  // What the registry's claim accepts, less the float32 nodes cuda-generic's grid kernel runs
  // faster (cudnn_rnn_grid_reason), when cuda-generic comes later in the list on this device.
  Claim claim(const Node& node, const Graph& graph) const override {
    Claim c = ExecutionProvider::claim(node, graph);
    if (!c.yes || !node.domain.empty()) return c;  // recur::StackedRNN stays: one cuDNN call
    const ExecutionProvider* generic = grid_peer();
    if (!generic) return c;
    std::call_once(traits_once_, [this] { traits_ = cuda::read_gpu_traits(device().index); });
    const auto& opts = static_cast<const cuda::CudaOptions&>(options());
    const std::string why = cuda::cudnn_rnn_grid_reason(
        node, graph, opts, static_cast<const cuda::CudaOptions&>(generic->options()).persistent,
        traits_);
    return why.empty() ? c : Claim::decline(why);
  }

  void add_settings(SettingsParser& parser, cuda::CudaOptions& o) const override {
    parser.flag("tf32", &o.tf32);
    parser.flag("defer_to_grid", &o.defer_to_grid);
  }
  // auto: a persistent algorithm where one is known to be faster (persistent_candidates).
  cuda::CudaOptions::Persistent default_persistent() const override {
    return cuda::CudaOptions::Persistent::kAuto;
  }
  // One of cuDNN's persistent algorithms alone (persistent_candidates).
  std::vector<std::string> more_persistent_values() const override {
    return {"small_h", "static", "dynamic"};
  }

 private:
  // cuda-generic where it comes after cudnn in the session's list, can run here, and uses
  // cudnn's device; else null.
  const ExecutionProvider* grid_peer() const {
    auto self = std::find(listed_.begin(), listed_.end(), this);
    for (auto it = self == listed_.end() ? self : self + 1; it != listed_.end(); ++it) {
      const ExecutionProvider* p = *it;
      if (p->name() == "cuda-generic" && p->device() == device() && p->available(nullptr)) {
        return p;
      }
    }
    return nullptr;
  }

  mutable std::once_flag traits_once_;
  mutable cuda::GpuTraits traits_;
};

// Everything cuDNN's RNN cannot express, and the glue around it: the generic RNN kernel
// (every ONNX attribute), cuBLAS MatMul/Gemm, cuDNN Conv and pooling, and CUDA kernels for
// the elementwise, data movement, reduction and normalization operators.
class CudaGenericProvider final : public CudaProviderBase {
 public:
  CudaGenericProvider() : CudaProviderBase("cuda-generic") {
    static const std::shared_ptr<const KernelRegistry> registry =
        make_registry([](KernelRegistry& r) {
          cuda::register_generic_rnn_kernels(r);
          cuda::ops::register_elementwise_kernels(r);
          cuda::ops::register_movement_kernels(r);
          cuda::ops::register_reduce_kernels(r);
          cuda::ops::register_blas_kernels(r);
          cuda::ops::register_cudnn_op_kernels(r);
        });
    share_registry(registry);
    has_kernels_ = true;
  }

 protected:
  void add_settings(SettingsParser&, cuda::CudaOptions&) const override {}
  // The grid kernel (one cooperative launch for every step) where the batch is small enough
  // for it to pay (generic_rnn.cc).
  cuda::CudaOptions::Persistent default_persistent() const override {
    return cuda::CudaOptions::Persistent::kAuto;
  }
};

}  // namespace

std::unique_ptr<ExecutionProvider> make_cudnn_provider() {
  return std::make_unique<CudnnProvider>();
}

std::unique_ptr<ExecutionProvider> make_cuda_generic_provider() {
  return std::make_unique<CudaGenericProvider>();
}

}  // namespace recur
