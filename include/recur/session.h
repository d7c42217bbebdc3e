// Loading a model and running it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "recur/tensor.h"

namespace recur {

// One dimension of a declared shape: a number, a symbol such as "batch", or unknown.
struct Dim {
  int64_t value = -1;  // -1 when not a fixed number
  std::string symbol;  // the dim_param, if any
  bool is_fixed() const { return value >= 0; }
};

struct ValueInfo {
  std::string name;
  DType dtype = DType::kUndefined;          // kSequence for an ONNX sequence of tensors
  std::optional<std::vector<Dim>> shape;    // nullopt when the rank is unknown
  DType element_dtype = DType::kUndefined;  // a sequence's tensor type
  bool optional = false;             // an ONNX optional: Tensor::none() may be fed or returned
  bool has_default = false;          // an input backed by an initializer: optional to feed
  std::string shape_string() const;  // "[batch,16,64]", or "?" for an unknown rank
};

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
  // optimize(true).
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
  // --explain says why.
  SessionOptions& cuda_graphs(bool on) {
    cuda_graphs_ = on;
    return *this;
  }
  // Upper bound on Loop iterations, so a corrupt trip count cannot hang a run.
  SessionOptions& max_loop_iterations(int64_t n) {
    max_loop_iterations_ = n;
    return *this;
  }
  // Provider-specific settings, e.g. {"cuda.tf32", "1"}; unknown keys are an error at load.
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
  int64_t max_loop_iterations() const { return max_loop_iterations_; }
  const std::map<std::string, std::string>& config() const { return config_; }

 private:
  std::vector<std::string> providers_;
  int threads_ = 0;
  bool plan_only_ = false;
  bool optimize_ = true;
  Fusion rnn_layer_fusion_ = Fusion::kAuto;
  bool cuda_graphs_ = false;
  int64_t max_loop_iterations_ = 10'000'000;
  std::map<std::string, std::string> config_;
};

// Which provider runs a node, and why each provider before it declined.
struct NodeAssignment {
  struct Decline {
    std::string provider;
    std::string reason;
  };
  std::string node;
  std::string op;
  std::string provider;  // empty if no provider claimed the node
  std::vector<Decline> declined;
  std::vector<std::string> notes;  // e.g. "weights repacked at load", "fused 2 LSTM layers"
};

// Named outputs in the order they were asked for (by default the model's output order).
class Outputs {
 public:
  void add(std::string name, Tensor t) {
    names_.push_back(std::move(name));
    tensors_.push_back(std::move(t));
  }
  size_t size() const { return tensors_.size(); }
  const std::string& name(size_t i) const { return names_.at(i); }
  const Tensor& operator[](size_t i) const { return tensors_.at(i); }
  const Tensor& operator[](std::string_view name) const;  // throws recur::Error if absent
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<std::string> names_;
  std::vector<Tensor> tensors_;
};

using Feeds = std::vector<std::pair<std::string, Tensor>>;

struct RunOptions {
  std::vector<std::string> outputs;  // empty: every model output
  bool outputs_on_device = false;    // leave outputs where they were computed (no copy to host)
};

class Session {
 public:
  explicit Session(const std::string& model_path, const SessionOptions& options = {});
  // A model held in memory; external data is resolved against `base_dir`.
  static Session from_bytes(const void* data, size_t size, const SessionOptions& options = {},
                            const std::string& base_dir = ".");

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;

  // Runs the model. Const and safe to call from several threads at once.
  Outputs run(const Feeds& feeds, const RunOptions& options = {}) const;

  const std::vector<NodeAssignment>& assignment() const;
  // The assignment as a table, with device copies, fusions and notes.
  std::string explain() const;
  // The providers that took part, in priority order.
  const std::vector<std::string>& providers() const;

  struct Impl;

 private:
  explicit Session(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// The providers compiled into this build, in default priority order, and whether each has
// its device (e.g. "cudnn" without a GPU is listed with available=false and the reason).
struct ProviderInfo {
  std::string name;
  bool available = false;
  std::string reason;  // why not available
};
std::vector<ProviderInfo> list_providers();

}  // namespace recur
