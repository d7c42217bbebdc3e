#include "providers/onednn/onednn_provider.h"

#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/kernels.h"

namespace recur {

namespace onednn {

void register_kernels(KernelRegistry& r) {
  register_rnn_kernels(r);
  register_nn_kernels(r);
  register_math_kernels(r);
}

namespace {

class OnednnProvider final : public ExecutionProvider {
 public:
  OnednnProvider() : ExecutionProvider("onednn", Device::cpu()) {
    register_kernels(mutable_registry());
    options_.max_threads = max_threads_default();
  }

  Status configure(const ProviderConfig& config) override {
    OnednnOptions o;
    o.max_threads = config.threads > 0 ? config.threads : max_threads_default();
    for (const auto& [key, value] : config.settings) {
      auto bad = [&] {
        return invalid_argument("setting onednn." + key + "=" + value + ": expected " +
                                (key == "impl"        ? "auto, any or ldigo"
                                 : key == "threading" ? "auto, single, omp or split"
                                                      : "0 or 1"));
      };
      if (key == "impl") {
        if (value == "auto") {
          o.impl = ImplChoice::kAuto;
        } else if (value == "any" || value == "brgemm") {
          o.impl = ImplChoice::kAny;
        } else if (value == "ldigo" || value == "ref") {
          o.impl = ImplChoice::kLdigo;
        } else {
          return bad();
        }
      } else if (key == "threading") {
        if (value == "auto") {
          o.threading = ThreadingChoice::kAuto;
        } else if (value == "single") {
          o.threading = ThreadingChoice::kSingle;
        } else if (value == "omp") {
          o.threading = ThreadingChoice::kOmp;
        } else if (value == "split") {
          o.threading = ThreadingChoice::kSplit;
        } else {
          return bad();
        }
      } else if (key == "tune" || key == "verbose") {
        if (value != "0" && value != "1") return bad();
        (key == "tune" ? o.tune : o.verbose) = value == "1";
      } else {
        return invalid_argument("provider 'onednn' has no setting '" + key +
                                "' (it has: impl, threading, tune, verbose)");
      }
    }
    config_ = config;
    options_ = o;
    return ok_status();
  }

  const OnednnOptions& options() const { return options_; }

 private:
  OnednnOptions options_;
};

}  // namespace

const OnednnOptions& options_of(const CompileContext& ctx) {
  static const OnednnOptions kDefault{};
  const auto* p = dynamic_cast<const OnednnProvider*>(&ctx.provider());
  return p ? p->options() : kDefault;
}

}  // namespace onednn

std::unique_ptr<ExecutionProvider> make_onednn_provider() {
  return std::make_unique<onednn::OnednnProvider>();
}

}  // namespace recur
