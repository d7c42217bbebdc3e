// How a session is created (SessionOptions) and how one run goes (RunOptions).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace recur {

class SessionOptions {
 public:
  // Provider names in priority order. Empty means every available provider, in the default
  // order: cudnn, cuda-generic, onednn, reference.
  SessionOptions& providers(std::vector<std::string> names) {
    providers_ = std::move(names);
    return *this;
  }
  // Intra-op threads for CPU providers; 0 leaves the choice to the provider.
  SessionOptions& threads(int n) {
    threads_ = n;
    return *this;
  }
  // Assign nodes to providers as a machine with every device would, without compiling any
  // kernel. Such a session can be explained but not run.
  SessionOptions& plan_only(bool on) {
    plan_only_ = on;
    return *this;
  }
  // Graph optimisations (constant folding, RNN pattern fusion). On by default.
  SessionOptions& optimize(bool on) {
    optimize_ = on;
    return *this;
  }
  // Stacked RNN fusion: a chain of single-layer LSTM, GRU or RNN nodes joined only by the
  // exporter's reshaping glue (Squeeze, or Transpose + Reshape for bidirectional layers)
  // becomes one multi-layer node (recur::StackedRNN). kAuto: only where a GPU provider claims
  // the fused node (cuDNN runs it as one call with numLayers > 1). kOn: wherever a listed
  // provider claims it (the CPU providers run it layer by layer). kOff: never. Needs
  // optimize(true). A session option, not a provider setting: it rewrites the graph before
  // any provider is asked, and which provider then claims the fused node decides kAuto.
  enum class Fusion { kAuto, kOn, kOff };
  SessionOptions& rnn_layer_fusion(Fusion f) {
    rnn_layer_fusion_ = f;
    return *this;
  }
  // CUDA graphs: the first run of each input signature (shapes and dtypes) runs normally, the
  // second records the device work once and every later run replays it, with the setup
  // (allocation, descriptors, host-side shape work) outside the recording. Runs of one
  // signature are then serialized. A plan whose run needs the host between device steps (a
  // CPU kernel reading device data, a copy to the host) is not recorded and runs normally;
  // --explain says why. A session option, not a provider setting: a recording spans the
  // whole run, CPU steps and copies included, and any step of any provider can rule it out.
  SessionOptions& cuda_graphs(bool on) {
    cuda_graphs_ = on;
    return *this;
  }
  // Reproducible results: no provider choice depends on timing (the oneDNN RNN kernel takes a
  // fixed rule instead of timing candidates, see docs/semantics.md), so two sessions of one
  // model with the same options on one machine give bitwise identical outputs, as do runs of
  // one session from any number of threads. Off by default: timing may pick a faster
  // implementation.
  SessionOptions& deterministic(bool on) {
    deterministic_ = on;
    return *this;
  }
  // Upper bound on Loop iterations, so a corrupt trip count cannot hang a run.
  SessionOptions& max_loop_iterations(int64_t n) {
    max_loop_iterations_ = n;
    return *this;
  }
  // Provider settings as "<provider>.<key>", e.g. {"cudnn.tf32", "1"}. Each provider parses
  // its own once at load; an unknown key or a bad value is an error that lists the accepted
  // ones (onednn: impl, threading, tune, verbose; cudnn: device, tf32, persistent;
  // cuda-generic: device, persistent).
  SessionOptions& set(std::string key, std::string value) {
    config_[std::move(key)] = std::move(value);
    return *this;
  }

  const std::vector<std::string>& providers() const { return providers_; }
  int threads() const { return threads_; }
  bool plan_only() const { return plan_only_; }
  bool optimize() const { return optimize_; }
  Fusion rnn_layer_fusion() const { return rnn_layer_fusion_; }
  bool cuda_graphs() const { return cuda_graphs_; }
  bool deterministic() const { return deterministic_; }
  int64_t max_loop_iterations() const { return max_loop_iterations_; }
  const std::map<std::string, std::string>& config() const { return config_; }

 private:
  std::vector<std::string> providers_;
  int threads_ = 0;
  bool plan_only_ = false;
  bool optimize_ = true;
  Fusion rnn_layer_fusion_ = Fusion::kAuto;
  bool cuda_graphs_ = false;
  bool deterministic_ = false;
  int64_t max_loop_iterations_ = 10'000'000;
  std::map<std::string, std::string> config_;
};

struct RunOptions {
  std::vector<std::string> outputs;  // empty: every model output
  bool outputs_on_device = false;    // leave outputs where they were computed (no copy to host)
};

}  // namespace recur
