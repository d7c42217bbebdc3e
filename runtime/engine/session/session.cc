// The public Session: load, optimise, infer shapes, plan; then run through the runner.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "providers/reference/reference_provider.h"
#include "runtime/core/device_memory.h"
#include "runtime/core/memory_budget.h"
#include "runtime/engine/optimize/fold_constants.h"
#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/session/executor.h"
#include "runtime/engine/session/partitioner.h"
#include "runtime/engine/session/plan_builder.h"
#include "runtime/engine/session/provider_factory.h"
#include "runtime/engine/session/session_impl.h"
#include "runtime/graph/op_rules.h"

namespace recur {

namespace {

ValueInfo info_of(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  ValueInfo vi;
  vi.name = val.name;
  vi.dtype = val.type.dtype;
  vi.shape = val.type.shape;
  vi.element_dtype = val.type.element_dtype;
  vi.map_key_dtype = val.type.map_key_dtype;
  vi.map_value_dtype = val.type.map_value_dtype;
  vi.optional = val.type.optional;
  vi.has_default = val.is_initializer;
  return vi;
}

// Providers hand the count to OpenMP and thread pools as is: a huge one crashes libgomp, so
// bound it by the machine (oversubscription up to 4x is allowed, for tests and measurements).
Status check_threads(int threads) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t most = 4 * cores;
  if (threads == 0 || (threads >= 1 && threads <= most)) return ok_status();
  return invalid_argument("threads must be 0 (automatic) or 1.." + std::to_string(most) +
                          " on this machine, got " + std::to_string(threads));
}

// The Loop and Scan kernels treat a bound of 0 or less as none at all, so a caller's 0 or -1
// would silently remove the guard against a corrupt trip count.
Status check_max_loop_iterations(int64_t n) {
  if (n >= 1) return ok_status();
  return invalid_argument("max_loop_iterations must be at least 1, got " + std::to_string(n));
}

Status create_providers(Session::Impl& impl) {
  RECUR_RETURN_IF_ERROR(check_threads(impl.options.threads()));
  RECUR_RETURN_IF_ERROR(check_max_loop_iterations(impl.options.max_loop_iterations()));
  const auto& factories = builtin_providers();
  std::vector<std::string> names = impl.options.providers();
  if (names.empty()) {
    for (const auto& f : factories) names.push_back(f.name);
  }
  std::string known;
  for (const auto& f : factories) known += (known.empty() ? "" : ", ") + f.name;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    auto it = std::find_if(factories.begin(), factories.end(),
                           [&](const ProviderFactory& f) { return f.name == name; });
    if (!seen.insert(name).second) {
      return invalid_argument("provider '" + name + "' is listed twice");
    }
    if (it == factories.end()) {
      // A provider of the project that this build leaves out takes part as one that declines
      // everything, so that one provider list serves every build.
      if (auto absent = make_absent_provider(name)) {
        impl.owned_providers.push_back(std::move(absent));
        continue;
      }
      return invalid_argument("unknown provider '" + name + "' (this build has: " + known + ")");
    }
    impl.owned_providers.push_back(it->make());
  }
  // Settings are "<provider>.<key>"; each provider checks its own.
  for (const auto& [key, value] : impl.options.config()) {
    const auto dot = key.find('.');
    const std::string owner = dot == std::string::npos ? "" : key.substr(0, dot);
    if (std::none_of(factories.begin(), factories.end(),
                     [&](const ProviderFactory& f) { return f.name == owner; })) {
      return invalid_argument(
          "unknown setting '" + key +
          "': settings are named <provider>.<key>, with a provider of: " + known);
    }
  }
  std::vector<const ExecutionProvider*> listed;
  for (const auto& p : impl.owned_providers) listed.push_back(p.get());
  for (auto& p : impl.owned_providers) {
    ProviderConfig cfg;
    cfg.listed = listed;
    cfg.threads = impl.options.threads();
    cfg.plan_only = impl.options.plan_only();
    cfg.deterministic = impl.options.deterministic();
    cfg.tuning_cache = impl.options.tuning_cache();
    static_assert(static_cast<int>(ProviderConfig::Precision::kInt8) ==
                  static_cast<int>(SessionOptions::Precision::kInt8));
    cfg.cpu_precision = static_cast<ProviderConfig::Precision>(impl.options.cpu_precision());
    const std::string prefix = p->name() + ".";
    for (const auto& [key, value] : impl.options.config()) {
      if (key.rfind(prefix, 0) == 0) cfg.settings[key.substr(prefix.size())] = value;
    }
    RECUR_RETURN_IF_ERROR(p->configure(cfg));
    impl.providers.push_back(p.get());
    impl.provider_names.push_back(p->name());
  }
  return ok_status();
}

// The providers a plan may use, in priority order: the available ones (every one for a plan
// only).
bool usable(const Session::Impl& impl, const ExecutionProvider& p) {
  return impl.options.plan_only() || p.available(nullptr);
}

// The provider that would run `node`, or nullptr where none would.
const ExecutionProvider* claimant(const Session::Impl& impl, const Node& node, const Graph& g) {
  for (const ExecutionProvider* p : impl.providers) {
    if (usable(impl, *p) && p->claim(node, g).yes) return p;
  }
  return nullptr;
}

// A fusion happens where the provider that would run the original node (the Conv, the Erf,
// the first ReduceMean) runs the fused node too, so fusion never moves work to another
// provider; where no provider would run the original, where any runs the fused node.
NodeFusionFilter fusion_filter(const Session::Impl& impl) {
  return [&impl](const Node& original, const Node& fused, const Graph& g) {
    if (const ExecutionProvider* p = claimant(impl, original, g)) return p->claim(fused, g).yes;
    return claimant(impl, fused, g) != nullptr;
  };
}

// The blocking pass for the first usable provider that wants channel blocks, over the nodes
// that provider runs (in their blocked forms too).
void block_channels(const Session::Impl& impl, Graph& graph, const OpRules& rules,
                    const std::string& file) {
  const ExecutionProvider* blocker = nullptr;
  for (const ExecutionProvider* p : impl.providers) {
    if (usable(impl, *p) && p->channel_block() > 0) {
      blocker = p;
      break;
    }
  }
  if (!blocker) return;
  const int block = blocker->channel_block();
  auto accept = [&impl, block](const Node& original, const Node& blocked, const Graph& g) {
    const ExecutionProvider* p = claimant(impl, original, g);
    return p && p->channel_block() == block && p->claim(blocked, g).yes;
  };
  auto channels_last = [blocker](const std::vector<const Node*>& chain, const Graph& g) {
    return blocker->channels_last_chain(chain, g);
  };
  bool changed = false;
  block_conv_chains(graph, block, accept, &changed, channels_last)
      .with_context(file)
      .throw_if_error();
  if (changed) infer_shapes(graph, rules).with_context(file).throw_if_error();
}

// The fusions and layout rewrites, where the provider that runs a node runs its rewritten
// form; shapes are inferred again after those that change them.
void fuse(Session::Impl& impl, Graph& graph, const OpRules& rules, const std::string& file) {
  const SessionOptions& options = impl.options;
  // The swishes first: a Conv or MatMul whose output x * HardSigmoid(x) or x * Sigmoid(x)
  // reads then takes it as its own activation.
  fuse_swishes(graph, fusion_filter(impl)).with_context(file).throw_if_error();
  // Before the MatMul fusion, which takes the Add this leaves as its bias.
  fold_batchnorm_into_matmul(graph).with_context(file).throw_if_error();
  fuse_conv_activations(graph, fusion_filter(impl)).with_context(file).throw_if_error();
  fuse_gelus(graph, fusion_filter(impl)).with_context(file).throw_if_error();
  fuse_layer_norms(graph, fusion_filter(impl)).with_context(file).throw_if_error();
  fuse_matmul_bias(graph, fusion_filter(impl)).with_context(file).throw_if_error();
  block_channels(impl, graph, rules, file);
  if (options.rnn_layer_fusion() != SessionOptions::Fusion::kOff) {
    // Fused only where it pays (kAuto: a GPU provider claims the fused node first) or where
    // some listed provider can run it (kOn).
    const bool always = options.rnn_layer_fusion() == SessionOptions::Fusion::kOn;
    auto accept = [&impl, always](const Node& fused, const Graph& g) {
      const ExecutionProvider* p = claimant(impl, fused, g);
      return p && (always || !p->device().is_cpu());
    };
    const size_t before = graph.nodes().size();
    fuse_stacked_rnns(graph, accept).with_context(file).throw_if_error();
    if (graph.nodes().size() != before) {
      infer_shapes(graph, rules).with_context(file).throw_if_error();
    }
  }
  // After the stacked fusion, which takes layout-0 layers. Not at int8: oneDNN 2.6's int8
  // LSTM takes layout 0 only, and the node would run in float32 instead.
  if (options.cpu_precision() != SessionOptions::Precision::kInt8) {
    bool folded = false;
    fold_rnn_layouts(graph, fusion_filter(impl), &folded).with_context(file).throw_if_error();
    if (folded) infer_shapes(graph, rules).with_context(file).throw_if_error();
  }
}

std::shared_ptr<const Session::Impl> create(const std::function<Result<Model>()>& load,
                                            const SessionOptions& options) {
  const auto t_load = ProfileClock::now();
  Result<Model> loaded = load();
  if (!loaded.ok()) loaded.status().throw_if_error();
  auto impl = std::make_shared<Session::Impl>();
  if (options.profiling()) {
    impl->profiler = std::make_unique<Profiler>(options.profile_path(), t_load);
    impl->profiler->phase("load", t_load);
  }
  const auto t_optimize = ProfileClock::now();
  impl->model = std::move(loaded).value();
  impl->options = options;
  Graph& graph = *impl->model.graph;
  const std::string& file = impl->model.path;
  for (const std::string& w : impl->model.warnings)
    std::fprintf(stderr, "recur: warning: %s\n", w.c_str());

  create_providers(*impl).throw_if_error();
  impl->host = make_reference_provider("host");
  const OpRules& rules = builtin_op_rules();
  if (options.optimize()) optimize_graph(graph).with_context(file).throw_if_error();
  infer_shapes(graph, rules).with_context(file).throw_if_error();
  // Not an optimization: without it ONNX Runtime's fused operators would not run at all.
  lower_contrib_ops(graph, [&rules](Graph& g) { return infer_shapes(g, rules); })
      .with_context(file)
      .throw_if_error();
  if (options.optimize()) {
    // Shapes are known now: shape computations over static shapes, and whatever depends only
    // on constants (in subgraphs too), become constants.
    fold_constants(graph, *impl->host, impl->options, &impl->folded)
        .with_context(file)
        .throw_if_error();
    if (!impl->folded.empty()) infer_shapes(graph, rules).with_context(file).throw_if_error();
    fuse(*impl, graph, rules, file);
  }

  if (impl->profiler) impl->profiler->phase("optimize", t_optimize);
  const auto t_plan = ProfileClock::now();
  PartitionOptions popts;
  popts.session = &impl->options;
  popts.plan_only = options.plan_only();
  popts.host_provider = impl->host.get();
  popts.owned_graph = &graph;
  auto plan = build_plan(graph, impl->providers, popts);
  if (!plan.ok()) plan.status().with_context(file).throw_if_error();
  impl->plan = std::move(plan).value();
  impl->assignment = impl->plan->assignment;
  // Kernels keep their own repacked copies (on the host or a device): free the originals.
  for (ValueId v : impl->plan->released_constants) graph.remove_initializer(v);
  RunSetup setup;
  setup.plan = impl->plan.get();
  setup.providers = impl->providers;
  setup.providers.push_back(impl->host.get());
  setup.threads = options.threads();
  setup.max_loop_iterations = options.max_loop_iterations();
  // Read once here, not per run: a run's limit must not depend on what others hold.
  setup.memory_limit = options.memory_limit() ? static_cast<size_t>(options.memory_limit())
                                              : available_host_memory();
  impl->runner = make_runner(std::move(setup), options.cuda_graphs());
  impl->output_cones.emplace(*impl->plan);
  if (options.random_seed()) {
    impl->random_base = *options.random_seed();
    impl->random_fixed = true;
  } else if (options.deterministic()) {
    impl->random_fixed = true;
  } else {
    // Sessions created together must not draw alike: the base mixes the clock with the
    // system's entropy, which std::random_device may fail to reach (it throws then).
    uint64_t base =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    try {
      std::random_device rd;
      base ^= uint64_t{rd()} << 32 | rd();
    } catch (const std::exception&) {
    }
    impl->random_base = mix64(base);
  }
  const char* arena_env = std::getenv("RECUR_ARENA");
  impl->use_arenas = !(arena_env && std::string_view(arena_env) == "0");
  if (impl->profiler) {
    impl->profiler->phase("plan", t_plan);
    impl->profiler->set_model(file, impl->provider_names);
  }

  for (ValueId v : graph.inputs()) impl->inputs.push_back(info_of(graph, v));
  for (ValueId v : graph.outputs()) impl->outputs.push_back(info_of(graph, v));
  // The first of a name listed twice wins, as a search from the front would find it.
  for (size_t i = 0; i < impl->inputs.size(); ++i)
    impl->input_index.emplace(impl->inputs[i].name, i);
  for (size_t i = 0; i < impl->outputs.size(); ++i) {
    impl->output_index.emplace(impl->outputs[i].name, i);
  }
  return impl;
}

LoadOptions load_options(const SessionOptions& options) {
  LoadOptions lo;
  lo.strict_schema = options.strict_schema();
  return lo;
}

Status check_feed(const ValueInfo& want, const Tensor& t) {
  if (!t.defined()) return invalid_argument("input '" + want.name + "' is an empty tensor");
  if (t.is_none()) {
    if (want.optional) return ok_status();
    return invalid_argument("input '" + want.name + "' is an empty optional but the model does " +
                            "not declare it optional");
  }
  if (want.dtype != DType::kUndefined && t.dtype() != want.dtype) {
    return invalid_argument("input '" + want.name + "' is " + std::string(dtype_name(t.dtype())) +
                            " but the model expects " + std::string(dtype_name(want.dtype)));
  }
  if (t.is_map() && want.map_key_dtype != DType::kUndefined &&
      (t.map_keys().dtype() != want.map_key_dtype || t.element_dtype() != want.map_value_dtype)) {
    return invalid_argument(
        "input '" + want.name + "' is a map(" + std::string(dtype_name(t.map_keys().dtype())) +
        ", " + std::string(dtype_name(t.element_dtype())) + ") but the model expects map(" +
        std::string(dtype_name(want.map_key_dtype)) + ", " +
        std::string(dtype_name(want.map_value_dtype)) + ")");
  }
  if (!want.shape) return ok_status();
  const auto& dims = *want.shape;
  if (static_cast<size_t>(t.rank()) != dims.size()) {
    return invalid_argument("input '" + want.name + "' has shape " + shape_to_string(t.shape()) +
                            " (rank " + std::to_string(t.rank()) + ") but the model expects " +
                            want.shape_string() + " (rank " + std::to_string(dims.size()) + ")");
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].is_fixed() && dims[i].value != t.shape()[i]) {
      return invalid_argument("input '" + want.name + "' has shape " + shape_to_string(t.shape()) +
                              " but the model expects " + want.shape_string() + ": dimension " +
                              std::to_string(i) + " must be " + std::to_string(dims[i].value));
    }
  }
  return ok_status();
}

// Whether `t`'s memory lies in one of the feeds'.
bool points_into(const Tensor& t, const Feeds& feeds) {
  const auto* p = static_cast<const char*>(t.raw_data());
  for (const auto& [name, f] : feeds) {
    if (!f.is_tensor() || !f.is_cpu()) continue;
    const auto* base = static_cast<const char*>(f.raw_data());
    if (base && p >= base && p < base + f.nbytes()) return true;
  }
  return false;
}

}  // namespace

void (*g_run_observer)(bool begin) = nullptr;

Session::Session(const std::string& model_path, const SessionOptions& options)
    : impl_(create([&] { return load_model(model_path, load_options(options)); }, options)) {}

Session Session::from_bytes(const void* data, size_t size, const SessionOptions& options,
                            const std::string& base_dir) {
  return Session(create(
      [&] {
        return load_model_from_bytes(data, size, base_dir, "<memory>", load_options(options));
      },
      options));
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs; }
const ModelMetadata& Session::metadata() const { return impl_->model.metadata; }
const std::vector<NodeAssignment>& Session::assignment() const { return impl_->assignment; }
const std::vector<std::string>& Session::providers() const { return impl_->provider_names; }
const std::vector<std::string>& Session::warnings() const { return impl_->model.warnings; }

Outputs Session::run(const Feeds& feeds, const RunOptions& options) const {
  const Impl& impl = *impl_;
  if (impl.options.plan_only()) {
    throw Error(ErrorCode::kFailedPrecondition,
                impl.model.path + ": this session was created with plan_only and cannot run");
  }
  const SubgraphPlan& plan = *impl.plan;
  std::optional<ArenaPool::Lease> lease;
  std::vector<Tensor> fresh;
  FrameArena* main = nullptr;
  if (impl.use_arenas) {
    lease.emplace(impl.arenas.lease());
    main = &(*lease)->frame_of(plan);
  } else {
    fresh = new_frame(plan);
  }
  std::vector<Tensor>& frame = main ? main->frame : fresh;
  // Whatever happens, the leased frame lets go of this run's values.
  struct Clear {
    FrameArena* f;
    ~Clear() {
      if (f) f->clear();
    }
  } clear{main};
  std::vector<char> fed(impl.inputs.size(), 0);
  for (const auto& [name, tensor] : feeds) {
    const auto found = impl.input_index.find(name);
    if (found == impl.input_index.end()) {
      std::string names;
      for (const auto& in : impl.inputs) names += (names.empty() ? "" : ", ") + in.name;
      throw Error(ErrorCode::kInvalidArgument, impl.model.path + ": unknown input '" + name +
                                                   "' (the model's inputs are: " + names + ")");
    }
    const size_t i = found->second;
    if (fed[i]) {
      throw Error(ErrorCode::kInvalidArgument,
                  impl.model.path + ": input '" + name + "' is fed twice");
    }
    check_feed(impl.inputs[i], tensor).with_context(impl.model.path).throw_if_error();
    fed[i] = 1;
    frame[static_cast<size_t>(plan.input_slots[i])] = tensor;
  }
  for (size_t i = 0; i < impl.inputs.size(); ++i) {
    if (!fed[i] && !impl.inputs[i].has_default) {
      throw Error(ErrorCode::kInvalidArgument, impl.model.path + ": missing input '" +
                                                   impl.inputs[i].name + "' (" +
                                                   std::string(dtype_name(impl.inputs[i].dtype)) +
                                                   impl.inputs[i].shape_string() + ")");
    }
  }

  std::vector<size_t> wanted;
  if (options.outputs.empty()) {
    for (size_t i = 0; i < impl.outputs.size(); ++i) wanted.push_back(i);
  } else {
    for (const std::string& name : options.outputs) {
      const auto found = impl.output_index.find(name);
      if (found == impl.output_index.end()) {
        throw Error(ErrorCode::kInvalidArgument,
                    impl.model.path + ": the model has no output '" + name + "'");
      }
      wanted.push_back(found->second);
    }
  }

  // A run that asks for some of the outputs runs only the steps they need. (ONNX Runtime runs
  // the whole graph; so an unwanted output's errors, and its cost, do not reach this run.)
  std::vector<uint8_t> own_needed;
  std::vector<uint32_t> own_todo;
  std::span<const uint8_t> needed;
  if (!options.outputs.empty()) {
    std::vector<uint8_t>& mask = lease ? (*lease)->needed_steps : own_needed;
    impl.output_cones->mark(plan, wanted, mask, lease ? (*lease)->needed_todo : own_todo);
    needed = mask;
  }

  RunControl control;
  control.terminate = options.terminate_flag();
  control.deadline = options.deadline();
  control.fine_grained = options.cancellable();
  const RunRandom random(impl.next_run_seed());
  control.random = &random;
  {
    const ProfileRun profiled(impl.profiler.get());
    if (g_run_observer) g_run_observer(true);
    Status st = impl.runner->run(frame, control, lease ? &**lease : nullptr, needed);
    if (g_run_observer) g_run_observer(false);
    st.with_context(impl.model.path).throw_if_error();
  }

  Outputs out;
  for (size_t i : wanted) {
    Tensor t = frame[static_cast<size_t>(plan.output_slots[i])];
    // An output in a frame's arena (a view the plan did not foresee) would be overwritten by
    // a later run: the caller gets its own copy. One in a block of the run's cache is the
    // caller's as it is: the cache hands a block out again only once nothing else holds it.
    // An output that is a view of a feed (Identity, Reshape, ... of an input) would change
    // when the caller reuses its input buffer: it gets a copy too.
    if (t.is_tensor() && t.is_cpu() && t.dtype() != DType::kString && t.nbytes() > 0 &&
        ((lease && (*lease)->in_arena(t.raw_data())) || points_into(t, feeds))) {
      t = t.clone();
    }
    if (!t.is_cpu() && !options.outputs_on_device) {
      auto host = to_device(t, Device::cpu());
      host.status().with_context(impl.model.path).throw_if_error();
      t = std::move(host).value();
    }
    out.add(impl.outputs[i].name, std::move(t));
  }
  return out;
}

std::vector<ProfileEvent> Session::profile() const {
  return impl_->profiler ? impl_->profiler->events() : std::vector<ProfileEvent>{};
}

std::string Session::end_profiling() const {
  if (!impl_->profiler) return {};
  Result<std::string> path = impl_->profiler->write();
  path.status().throw_if_error();
  return std::move(path).value();
}

std::vector<ProviderInfo> list_providers() {
  std::vector<ProviderInfo> out;
  for (const auto& f : builtin_providers()) {
    auto p = f.make();
    ProviderInfo info;
    info.name = f.name;
    info.available = p->available(&info.reason);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace recur
