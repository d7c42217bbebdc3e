#include "providers/onednn/onednn_provider.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/kernels.h"
#include "providers/onednn/nn/nn.h"

namespace recur {

namespace onednn {

void register_kernels(KernelRegistry& r) {
  register_rnn_kernels(r);
  register_nn_kernels(r);
  register_math_kernels(r);
  register_reduce_kernels(r);
  register_top_k(r);
  register_transpose(r);
  register_to_blocked(r);
  register_from_blocked(r);
}

namespace {

class OnednnProvider final : public ExecutionProvider {
 public:
  OnednnProvider() : ExecutionProvider("onednn", Device::cpu()) {
    static const std::shared_ptr<const KernelRegistry> registry = make_registry(register_kernels);
    share_registry(registry);
    options_.max_threads = max_threads_default();
  }

  Status configure(const ProviderConfig& config) override {
    OnednnOptions o;
    o.threads = config.threads;
    o.plan_only = config.plan_only;
    o.deterministic = config.deterministic;
    o.precision = config.cpu_precision;
    o.max_threads = config.threads > 0 ? config.threads : max_threads_default();
    SettingsParser parser("onednn");
    parser
        .choice("impl", {"auto", "primitive", "any", "brgemm", "ldigo", "ref"},
                [&o](const std::string& v) {
                  o.small_cells = v == "auto";
                  o.impl = v == "auto" || v == "primitive" ? ImplChoice::kAuto
                           : v == "any" || v == "brgemm"   ? ImplChoice::kAny
                                                           : ImplChoice::kLdigo;
                })
        .choice("threading", {"auto", "single", "omp", "split"},
                [&o](const std::string& v) {
                  o.threading = v == "auto"     ? ThreadingChoice::kAuto
                                : v == "single" ? ThreadingChoice::kSingle
                                : v == "omp"    ? ThreadingChoice::kOmp
                                                : ThreadingChoice::kSplit;
                })
        .choice("precision", {"fp32", "bf16", "int8"},
                [&o](const std::string& v) {
                  using P = ProviderConfig::Precision;
                  o.precision = v == "fp32" ? P::kFp32 : v == "bf16" ? P::kBf16 : P::kInt8;
                })
        .choice("tune", {"0", "1", "lazy", "off", "on", "false", "true"},
                [&o](const std::string& v) {
                  using T = OnednnOptions::Tune;
                  o.tune = v == "lazy"                            ? T::kLazy
                           : v == "1" || v == "on" || v == "true" ? T::kAtLoad
                                                                  : T::kOff;
                })
        .choice("prepare", {"run", "load"},
                [&o](const std::string& v) { o.prepare_at_load = v == "load"; })
        .choice("busy_cores", {"shrink", "wait"},
                [&o](const std::string& v) { o.shrink_teams = v == "shrink"; })
        .choice("winograd", {"auto", "off"},
                [&o](const std::string& v) { o.winograd = v == "auto"; })
        .choice("blocked", {"auto", "off", "nchw16c", "nhwc"},
                [&o](const std::string& v) {
                  using C = OnednnOptions::Chains;
                  o.blocked = v == "auto"      ? C::kAuto
                              : v == "nchw16c" ? C::kBlocks
                              : v == "nhwc"    ? C::kChannelsLast
                                               : C::kOff;
                })
        .integer("time_block", 0, INT32_MAX, [&o](int64_t v) { o.time_block = v; })
        .flag("verbose", &o.verbose);
    // tuning_cache takes a path, which the parser's table has no kind for.
    std::map<std::string, std::string> settings = config.settings;
    std::string cache = TuningCache::default_path();
    if (!config.tuning_cache.empty()) {
      cache = config.tuning_cache == "off" ? std::string() : config.tuning_cache;
    }
    if (auto it = settings.find("tuning_cache"); it != settings.end()) {
      cache = it->second == "off" ? std::string() : it->second;
      settings.erase(it);
    }
    RECUR_RETURN_IF_ERROR(parser.parse(settings));
    if (!cache.empty()) o.cache = std::make_shared<TuningCache>(cache, &tuning_env);
    options_ = o;
    return ok_status();
  }

  const ProviderOptions& options() const override { return options_; }

  // nChw16c, the layout oneDNN's AVX-512 convolutions run in, and recur's blocked pools' vector.
  int channel_block() const override {
    return options_.blocked != OnednnOptions::Chains::kOff && avx512::have_avx512()
               ? static_cast<int>(avx512::kLanes)
               : 0;
  }

  bool channels_last_chain(const std::vector<const Node*>& chain,
                           const Graph& graph) const override {
    using C = OnednnOptions::Chains;
    if (options_.blocked == C::kChannelsLast) return !chain_has_pool(chain);
    return options_.blocked == C::kAuto && chain_runs_channels_last(chain, graph);
  }

 private:
  OnednnOptions options_;
};

}  // namespace

const OnednnOptions& options_of(const CompileContext& ctx) {
  return ctx.provider_options<OnednnOptions>();
}

}  // namespace onednn

std::unique_ptr<ExecutionProvider> make_onednn_provider() {
  return std::make_unique<onednn::OnednnProvider>();
}

}  // namespace recur
