// How a session is created (SessionOptions) and how one run goes (RunOptions).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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
  // The seed of the random operators (RandomNormal, RandomUniform, their -Like forms,
  // Bernoulli, Multinomial, Dropout in training mode). With a seed, every run of the session
  // draws the same values, as does every session given that seed. Without one, each run
  // draws new values, except under deterministic(true), which then seeds with 0. A node's own
  // `seed` attribute wins over both: that node draws the same values on every run. Within a
  // run, each execution of a node (every Loop iteration) draws anew. docs/semantics.md.
  SessionOptions& random_seed(uint64_t seed) {
    random_seed_ = seed;
    return *this;
  }
  // Upper bound on Loop iterations, so a corrupt trip count cannot hang a run.
  SessionOptions& max_loop_iterations(int64_t n) {
    max_loop_iterations_ = n;
    return *this;
  }
  // Every node of the model as loaded (subgraphs included) is checked against its ONNX
  // operator schema: attribute names, types, required ones, allowed values, and input and
  // output counts. An attribute the schema does not declare is an error, as in ONNX Runtime;
  // strict_schema(false) makes it a warning (Session::warnings(), stderr, and the node's
  // notes in explain()) and the attribute is ignored. Every other violation stays an error.
  SessionOptions& strict_schema(bool on) {
    strict_schema_ = on;
    return *this;
  }
  // Upper bound on the host memory one run may hold, in bytes: every host tensor allocated
  // during the run counts (intermediates, outputs, Loop and Scan outputs as they grow) while it
  // is alive. An allocation that would pass it fails the run with ErrorCode::kOutOfRange,
  // naming the node. 0 (the default) means the memory available on the machine when the
  // session is created (MemAvailable in /proc/meminfo). Each concurrent run has its own.
  SessionOptions& memory_limit(uint64_t bytes) {
    memory_limit_ = bytes;
    return *this;
  }
  // Profiling: every run records one event per node (with its provider and input shapes),
  // nested under the run and, for subgraph nodes, under their If, Loop or Scan; the session
  // also times its load. With a path, the events are written there as Chrome trace JSON
  // (chrome://tracing, Perfetto) by Session::end_profiling() and again when the session is
  // destroyed; with an empty path they are only kept for Session::profile().
  SessionOptions& profile(std::string path) {
    profile_ = true;
    profile_path_ = std::move(path);
    return *this;
  }
  // The persistent tuning cache of the oneDNN RNN kernel (docs/tuning-cache.md): a file path,
  // "off", or empty for the default ($XDG_CACHE_HOME/recur/, else ~/.cache/recur/). The same
  // as the provider setting onednn.tuning_cache, which wins when both are given.
  SessionOptions& tuning_cache(std::string path) {
    tuning_cache_ = std::move(path);
    return *this;
  }
  // The arithmetic of the CPU RNN kernels. kFp32 (the default) is exact fp32. kBf16 runs the
  // oneDNN RNN primitives with bf16 weights and inputs (f32 accumulation and state) where the
  // CPU has native bf16; kInt8 quantizes the RNN weights per output channel at load and runs
  // oneDNN's int8 RNN. A node that cannot take the precision stays in fp32, and explain()
  // says why. Reduced precision changes the results: docs/precision.md gives the errors.
  enum class Precision { kFp32, kBf16, kInt8 };
  SessionOptions& cpu_precision(Precision p) {
    cpu_precision_ = p;
    return *this;
  }
  // Provider settings as "<provider>.<key>", e.g. {"cudnn.tf32", "1"}. Each provider parses
  // its own once at load; an unknown key or a bad value is an error that lists the accepted
  // ones (onednn: impl, threading, precision, tune, tuning_cache, verbose; cudnn: device, tf32,
  // persistent; cuda-generic: device, persistent).
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
  const std::optional<uint64_t>& random_seed() const { return random_seed_; }
  int64_t max_loop_iterations() const { return max_loop_iterations_; }
  bool strict_schema() const { return strict_schema_; }
  uint64_t memory_limit() const { return memory_limit_; }
  const std::map<std::string, std::string>& config() const { return config_; }
  bool profiling() const { return profile_; }
  const std::string& profile_path() const { return profile_path_; }
  const std::string& tuning_cache() const { return tuning_cache_; }
  Precision cpu_precision() const { return cpu_precision_; }

 private:
  std::vector<std::string> providers_;
  int threads_ = 0;
  bool plan_only_ = false;
  bool optimize_ = true;
  Fusion rnn_layer_fusion_ = Fusion::kAuto;
  bool cuda_graphs_ = false;
  bool deterministic_ = false;
  std::optional<uint64_t> random_seed_;
  int64_t max_loop_iterations_ = 10'000'000;
  bool strict_schema_ = true;
  uint64_t memory_limit_ = 0;
  std::map<std::string, std::string> config_;
  bool profile_ = false;
  std::string profile_path_;
  std::string tuning_cache_;
  Precision cpu_precision_ = Precision::kFp32;
};

struct RunOptions {
  using Clock = std::chrono::steady_clock;

  // The outputs to return, in this order; empty: every model output, in model order. A run
  // runs only the nodes these need (with every random node, so that a fixed seed gives the
  // same values whichever outputs are asked for), except that a CUDA graph replay runs all.
  std::vector<std::string> outputs;
  bool outputs_on_device = false;  // leave outputs where they were computed (no copy to host)

  // Cancellation. terminate() ends a run that was given these options, or a copy of them (the
  // copies share one flag), at its next node, Loop or Scan iteration or block of RNN time
  // steps, with ErrorCode::kCancelled. Safe to call from any thread, before or during the run;
  // a run started after it ends at once. A deadline ends the run the same way once passed.
  void terminate() const { terminate_->store(true, std::memory_order_relaxed); }
  bool terminated() const { return terminate_->load(std::memory_order_relaxed); }
  RunOptions& deadline(Clock::time_point t) {
    deadline_ = t;
    return *this;
  }
  // A deadline `d` from now, for any duration type (milliseconds, seconds as a double, ...).
  // One beyond what the clock can count (or NaN) is the clock's last instant, so never
  // reached; a negative one has already passed.
  template <class Rep, class Period>
  RunOptions& timeout(std::chrono::duration<Rep, Period> d) {
    const Clock::time_point now = Clock::now();
    const std::chrono::duration<double> wanted = d;
    // Half the room left, so that rounding in the double cannot reach the end.
    const std::chrono::duration<double> room = (Clock::time_point::max() - now) / 2;
    if (!(wanted < room)) return deadline(Clock::time_point::max());
    if (wanted <= std::chrono::duration<double>::zero()) return deadline(now);
    return deadline(now + std::chrono::duration_cast<Clock::duration>(wanted));
  }
  const std::optional<Clock::time_point>& deadline() const { return deadline_; }
  // Promises that terminate() may be called, so that it takes effect within milliseconds even
  // inside one long RNN node: the oneDNN RNN then runs long sequences in blocks of time steps
  // (a little slower) instead of one call. Without it (and without a deadline, which implies
  // it) terminate() still ends the run, but only after such a node. Off by default.
  RunOptions& cancellable(bool on) {
    cancellable_ = on;
    return *this;
  }
  bool cancellable() const { return cancellable_ || deadline_.has_value(); }
  // The flag terminate() sets, for the runtime to watch.
  const std::atomic<bool>* terminate_flag() const { return terminate_.get(); }

 private:
  std::shared_ptr<std::atomic<bool>> terminate_ = std::make_shared<std::atomic<bool>>(false);
  std::optional<Clock::time_point> deadline_;
  bool cancellable_ = false;
};

}  // namespace recur
