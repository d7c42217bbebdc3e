// Execution providers: who can run a node (claim) and how (compile into a Kernel).
#pragma once

#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "recur/options.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/provider/kernel.h"
#include "runtime/provider/provider_options.h"

namespace recur {

class ExecutionProvider;

struct Claim {
  bool yes = false;
  std::string reason;  // why not, when yes is false
  static Claim accept() { return {true, {}}; }
  static Claim decline(std::string why) { return {false, std::move(why)}; }
};

// Everything a kernel factory may look at while compiling one node.
class CompileContext {
 public:
  using SubgraphCompiler =
      std::function<Result<std::shared_ptr<const SubgraphPlan>>(const Graph&, const Node&)>;

  // Frees constant input i now if this node is its only reader, or with check_only says
  // whether it would free the memory; see release_input_now() and input_dies_on_release().
  using InputDropper = std::function<bool(size_t i, bool check_only)>;

  CompileContext(const Node& node, const Graph& graph, const ExecutionProvider& provider,
                 const SessionOptions& options, SubgraphCompiler subgraphs, InputDropper drop = {})
      : node_(node),
        graph_(graph),
        provider_(provider),
        options_(options),
        subgraphs_(std::move(subgraphs)),
        drop_(std::move(drop)) {}

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  const ExecutionProvider& provider() const { return provider_; }
  const SessionOptions& options() const { return options_; }
  // The compiling provider's parsed settings, as its own options type T. A kernel is
  // registered only by its own provider, so T is known where this is called.
  template <class T>
  const T& provider_options() const;
  int opset() const { return node_.opset; }

  size_t num_inputs() const { return node_.inputs.size(); }
  bool has_input(size_t i) const { return node_.has_input(i); }
  const TypeInfo& input_type(size_t i) const;
  const TypeInfo& output_type(size_t i) const;
  // The input's value if it is a constant initializer the user cannot override, else nullptr.
  const Tensor* constant_input(size_t i) const;
  // The kernel keeps its own (repacked) copy of constant input i; the session may free the
  // original once no other kernel needs it.
  void release_input(size_t i) { released_.push_back(i); }
  // release_input(i), and the memory goes at once where this node is the input's only reader,
  // instead of when the plan is built: a kernel that repacks W before R then never holds both
  // ONNX copies beside both of its own. constant_input(i) may be null from here on, and any
  // pointer to it dangles.
  void release_input_now(size_t i) {
    release_input(i);
    if (drop_) drop_(i, false);
  }
  // Whether release_input_now(i) frees constant input i's memory: this node is its only reader
  // and its tensor the memory's only owner. A kernel that repacks it and then calls
  // release_input_now(i) may then give its pages back as it reads them (DiscardBehind), and
  // hold the weights about once at the peak of loading instead of once and a half.
  bool input_dies_on_release(size_t i) const { return drop_ && drop_(i, true); }
  const std::vector<size_t>& released_inputs() const { return released_; }
  // A line for `--explain`: "weights repacked to ldigo at load", "W is a graph input: repacked
  // per run".
  void note(std::string text) { notes_.push_back(std::move(text)); }
  const std::vector<std::string>& notes() const { return notes_; }
  // Compiles a subgraph of this node (If/Loop/Scan bodies) with the session's providers.
  Result<std::shared_ptr<const SubgraphPlan>> compile_subgraph(const Graph& g) const {
    return subgraphs_(g, node_);
  }
  Status error(ErrorCode code, const std::string& message) const {
    return Status(code, node_.describe() + ": " + message);
  }

 private:
  const Node& node_;
  const Graph& graph_;
  const ExecutionProvider& provider_;
  const SessionOptions& options_;
  SubgraphCompiler subgraphs_;
  InputDropper drop_;
  std::vector<size_t> released_;
  std::vector<std::string> notes_;
};

using KernelFactory = std::function<Result<std::unique_ptr<Kernel>>(CompileContext&)>;
// Attribute- and type-driven refusal, beyond "is there a kernel for this op and opset".
using ClaimFn = std::function<Claim(const Node&, const Graph&)>;
// The same for a kernel whose reach depends on its provider's settings (options()): the oneDNN
// RNNs take a clip or other activations only where recur's own kernels are allowed to run.
using SettingsClaimFn = std::function<Claim(const Node&, const Graph&, const ProviderOptions&)>;

struct KernelDef {
  std::string op_type;
  std::string domain;   // "" for the default ONNX domain
  int since = 1;        // first opset this kernel implements
  int until = INT_MAX;  // last opset
  KernelFactory create;
  ClaimFn claim;                   // optional
  SettingsClaimFn settings_claim;  // optional, instead of claim
  // Inputs the kernel reads from host memory even when its provider runs on a device (the
  // sequence lengths that size cuDNN's descriptors). The partitioner places them on the host.
  std::vector<size_t> host_inputs = {};
  // Inputs that, when constant, the kernel repacks at compile and never reads at run time
  // (it releases them). --plan-only uses this to show no load-time copy for them.
  std::vector<size_t> prepacked_inputs = {};
  // Inputs the kernel reads only for their shape and dtype, never their data (Shape, Size).
  // The partitioner leaves them where they are: no copy between devices, whichever device the
  // kernel runs on.
  std::vector<size_t> shape_only_inputs = {};
  // Whether the kernel handles string tensors, sequence values and maps among its inputs. The
  // executor refuses them to every other kernel, so byte-moving kernels never see objects.
  bool takes_strings = false;
  bool takes_sequences = false;
  bool takes_maps = false;
  bool takes_optionals = false;  // may receive an empty optional (Tensor::none())
};

class KernelRegistry {
 public:
  void add(KernelDef def);
  // The kernel for `op` at `opset`, or nullptr.
  const KernelDef* find(std::string_view domain, std::string_view op, int opset) const;
  // Why find() failed: "unsupported op Foo (opset 11)" or "no Foo kernel for opset 3".
  std::string why_not(std::string_view domain, std::string_view op, int opset) const;
  std::vector<std::string> ops() const;  // "Op" or "domain::Op", sorted, unique

 private:
  std::multimap<std::string, KernelDef, std::less<>> defs_;  // by "domain::op"
};

class ExecutionProvider;

struct ProviderConfig {
  int threads = 0;
  bool plan_only = false;
  bool deterministic = false;
  std::string tuning_cache;  // SessionOptions::tuning_cache: a path, "off" or empty
  enum class Precision { kFp32, kBf16, kInt8 };
  Precision cpu_precision = Precision::kFp32;   // SessionOptions::cpu_precision
  std::map<std::string, std::string> settings;  // the keys that start with "<provider>."
  // The session's providers in priority order, this one among them. Every one is configured
  // before the first claim, so a claim may read the options of another (cudnn leaves some nodes
  // to cuda-generic when it comes later in the list).
  std::vector<const ExecutionProvider*> listed;
};

class ExecutionProvider {
 public:
  ExecutionProvider(std::string name, Device device) : name_(std::move(name)), device_(device) {}
  virtual ~ExecutionProvider() = default;

  const std::string& name() const { return name_; }
  Device device() const { return device_; }
  // Whether the provider can run on this machine (a CUDA provider without a GPU cannot).
  virtual bool available(std::string* reason) const { return true; }
  // Parses the provider's own settings into its options (once, before any compile); unknown
  // keys and bad values are an error that lists the accepted ones.
  virtual Status configure(const ProviderConfig& config);
  // The parsed settings. Providers with settings return their own ProviderOptions subtype.
  virtual const ProviderOptions& options() const { return base_options_; }
  // The channel block its convolutions want their tensors in from one node to the next
  // (runtime/graph/blocked.h), or 0 for none: the session's blocking pass then rewrites the
  // chains of convolutions and pools this provider runs to pass blocked tensors.
  virtual int channel_block() const { return 0; }
  // Whether a chain of the blocking pass (its nodes in their plain forms, the convolutions ones
  // this provider runs) is to pass its tensors channels-last instead of in channel_block()'s
  // blocks.
  virtual bool channels_last_chain(const std::vector<const Node*>& chain,
                                   const Graph& graph) const {
    return false;
  }
  // Yes, or no with a reason. The default looks up the registry and then the def's claim.
  virtual Claim claim(const Node& node, const Graph& graph) const;
  virtual Result<std::unique_ptr<Kernel>> compile(CompileContext& ctx) const;
  // Where input i of `node` must be when its kernel runs: device(), or the host for the
  // kernel's host_inputs.
  Device input_device(const Node& node, size_t i) const;
  // Whether the kernel for `node` repacks input i at compile when it is constant.
  bool prepacks_input(const Node& node, size_t i) const;
  // Whether the kernel for `node` reads only the shape of input i (KernelDef::shape_only_inputs).
  bool reads_shape_only(const Node& node, size_t i) const;
  virtual std::unique_ptr<ProviderRunState> begin_run() const { return nullptr; }
  // Waits for the run's device work; called once per run after the last kernel.
  virtual Status end_run(ProviderRunState* state) const { return ok_status(); }
  // A recorder for replaying runs (SessionOptions::cuda_graphs), or nullptr if the provider
  // cannot record.
  virtual std::unique_ptr<RunRecorder> make_recorder() const { return nullptr; }

  const KernelRegistry& registry() const {
    return shared_registry_ ? *shared_registry_ : own_registry_;
  }
  // The provider's own registry, for providers whose kernels differ from instance to instance
  // (the tests' stand-ins). Unused once share_registry() is called.
  KernelRegistry& mutable_registry() { return own_registry_; }

 protected:
  ProviderOptions base_options_;
  // For providers whose device is chosen by a setting (cudnn.device).
  void set_device(Device device) { device_ = device; }
  // For providers whose kernels are the same in every instance: one registry, built once per
  // process, serves every session. Building one means running the registration code of every
  // operator, spread over the whole binary; each session used to do it again.
  void share_registry(std::shared_ptr<const KernelRegistry> r) { shared_registry_ = std::move(r); }

 private:
  std::string name_;
  Device device_;
  KernelRegistry own_registry_;
  std::shared_ptr<const KernelRegistry> shared_registry_;
};

// A registry filled by `fill`, for a provider's share_registry(); providers keep it in a
// function-local static so that it is built once per process.
std::shared_ptr<const KernelRegistry> make_registry(
    const std::function<void(KernelRegistry&)>& fill);

template <class T>
const T& CompileContext::provider_options() const {
  return static_cast<const T&>(provider_.options());
}

}  // namespace recur
