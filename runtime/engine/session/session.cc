// The public Session: load, optimise, infer shapes, partition, compile; then run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "providers/reference/reference_provider.h"
#include "recur/session.h"
#include "runtime/core/device_memory.h"
#include "runtime/engine/onnx/model_loader.h"
#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/shape_subgraph.h"
#include "runtime/engine/session/executor.h"
#include "runtime/engine/session/partitioner.h"
#include "runtime/engine/session/plan.h"
#include "runtime/engine/session/provider_factory.h"
#include "runtime/graph/op_rules.h"

namespace recur {

// One recorded run (SessionOptions::cuda_graphs) for one input signature.
struct GraphEntry {
  std::mutex mu;
  bool measured = false;
  bool recorded = false;
  bool failed = false;
  std::string why;
  size_t arena_bytes = 0;
  std::unique_ptr<RunRecorder> recorder;
  std::vector<Tensor> inputs;  // device buffers the recording reads, fed before each replay
  std::vector<Tensor> frame;   // the recorded run's frame: outputs at fixed addresses
};

struct Session::Impl {
  Model model;
  SessionOptions options;
  std::vector<std::unique_ptr<ExecutionProvider>> owned_providers;
  std::vector<const ExecutionProvider*> providers;
  std::vector<std::string> provider_names;
  // Runs the shape computations no listed CPU provider takes; index providers.size() in plans.
  std::unique_ptr<ExecutionProvider> host;
  std::unique_ptr<SubgraphPlan> plan;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<NodeAssignment> assignment;
  std::vector<std::string> folded;  // shape computations evaluated at load
  // CUDA graphs: the provider that records, or why runs are not recorded.
  int recorder_provider = -1;
  std::string graphs_off;
  mutable std::mutex graphs_mu;
  mutable std::map<std::string, std::shared_ptr<GraphEntry>> graphs;
};

namespace {

ValueInfo info_of(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  ValueInfo vi;
  vi.name = val.name;
  vi.dtype = val.type.dtype;
  vi.shape = val.type.shape;
  vi.element_dtype = val.type.element_dtype;
  vi.optional = val.type.optional;
  vi.has_default = val.is_initializer;
  return vi;
}

Status create_providers(Session::Impl& impl) {
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
  for (auto& p : impl.owned_providers) {
    ProviderConfig cfg;
    cfg.threads = impl.options.threads();
    cfg.plan_only = impl.options.plan_only();
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

// The providers of the session's plans, indexed like Step::provider: the listed ones, then the
// host provider.
std::vector<const ExecutionProvider*> run_providers(const Session::Impl& impl) {
  std::vector<const ExecutionProvider*> all = impl.providers;
  all.push_back(impl.host.get());
  return all;
}

bool has_subgraphs(const Node& n) {
  for (const auto& [k, a] : n.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

// CUDA graphs: a run can be recorded when, between its device steps, nothing needs the host
// with run-time data. Sets recorder_provider, or graphs_off with the reason.
void choose_recorder(Session::Impl& impl) {
  const SubgraphPlan& plan = *impl.plan;
  const Graph& g = *plan.graph;
  const auto providers = run_providers(impl);
  std::set<ValueId> graph_inputs(plan.input_slots.begin(), plan.input_slots.end());
  auto name_of = [&](ValueId slot) {
    return static_cast<size_t>(slot) < g.num_values() ? "'" + g.value(slot).name + "'"
                                                      : std::string("a copy");
  };
  bool any_device = false;
  for (const Step& s : plan.steps) {
    any_device |= s.kind == Step::Kind::kKernel &&
                  !providers[static_cast<size_t>(s.provider)]->device().is_cpu();
  }
  if (!any_device) {
    impl.graphs_off = "no node runs on a GPU";
    return;
  }
  int device_provider = -1;
  for (const Step& s : plan.steps) {
    if (s.kind == Step::Kind::kCopy) {
      if (!graph_inputs.count(s.src) || s.device.is_cpu()) {
        impl.graphs_off =
            "the run copies " + name_of(s.src) + " to " + s.device.to_string() + " between steps";
        return;
      }
      continue;
    }
    const ExecutionProvider* p = providers[static_cast<size_t>(s.provider)];
    const Node& node = g.node(s.node);
    if (!p->device().is_cpu()) {
      if (device_provider >= 0 &&
          providers[static_cast<size_t>(device_provider)]->device() != p->device()) {
        impl.graphs_off = "the plan uses two devices";
        return;
      }
      if (device_provider < 0) device_provider = s.provider;
    } else if (has_subgraphs(node)) {
      impl.graphs_off = node.describe() + " runs subgraphs on the host";
      return;
    }
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const ValueId v = s.inputs[i];
      if (v == kNoValue || (i < s.shape_only.size() && s.shape_only[i])) continue;
      const bool on_host =
          p->device().is_cpu() || (i < s.input_devices.size() && s.input_devices[i].is_cpu());
      if (on_host && graph_inputs.count(v)) {
        impl.graphs_off = node.describe() + " reads the values of graph input " + name_of(v) +
                          " on the host: a recording would keep one run's values";
        return;
      }
    }
  }
  const Device dev = providers[static_cast<size_t>(device_provider)]->device();
  for (size_t p = 0; p < providers.size(); ++p) {
    if (providers[p]->device() == dev && providers[p]->make_recorder()) {
      impl.recorder_provider = static_cast<int>(p);
      return;
    }
  }
  impl.graphs_off = "no provider on " + dev.to_string() + " can record runs";
}

std::shared_ptr<const Session::Impl> create(Result<Model> loaded, const SessionOptions& options) {
  if (!loaded.ok()) loaded.status().throw_if_error();
  auto impl = std::make_shared<Session::Impl>();
  impl->model = std::move(loaded).value();
  impl->options = options;
  Graph& graph = *impl->model.graph;
  const std::string& file = impl->model.path;

  create_providers(*impl).throw_if_error();
  impl->host = make_reference_provider("host");
  const OpRules& rules = builtin_op_rules();
  if (options.optimize()) optimize_graph(graph).with_context(file).throw_if_error();
  infer_shapes(graph, rules).with_context(file).throw_if_error();
  if (options.optimize()) {
    // Shapes are known now: shape computations over static shapes become constants.
    fold_shape_subgraphs(graph, *impl->host, impl->options, &impl->folded)
        .with_context(file)
        .throw_if_error();
    if (!impl->folded.empty()) infer_shapes(graph, rules).with_context(file).throw_if_error();
    if (options.rnn_layer_fusion() != SessionOptions::Fusion::kOff) {
      // Fused only where it pays (kAuto: a GPU provider claims the fused node first) or where
      // some listed provider can run it (kOn).
      const bool always = options.rnn_layer_fusion() == SessionOptions::Fusion::kOn;
      const bool plan_only = options.plan_only();
      const auto& providers = impl->providers;
      auto accept = [&providers, always, plan_only](const Node& fused, const Graph& g) {
        for (const ExecutionProvider* p : providers) {
          if (!plan_only && !p->available(nullptr)) continue;
          if (p->claim(fused, g).yes) return always || !p->device().is_cpu();
        }
        return false;
      };
      const size_t before = graph.nodes().size();
      fuse_stacked_rnns(graph, accept).with_context(file).throw_if_error();
      if (graph.nodes().size() != before) {
        infer_shapes(graph, rules).with_context(file).throw_if_error();
      }
    }
  }

  PartitionOptions popts;
  popts.session = &impl->options;
  popts.plan_only = options.plan_only();
  popts.host_provider = impl->host.get();
  auto plan = build_plan(graph, impl->providers, popts);
  if (!plan.ok()) plan.status().with_context(file).throw_if_error();
  impl->plan = std::move(plan).value();
  impl->assignment = impl->plan->assignment;
  // Kernels keep their own repacked copies (on the host or a device): free the originals.
  for (ValueId v : impl->plan->released_constants) graph.remove_initializer(v);
  if (options.cuda_graphs()) choose_recorder(*impl);

  for (ValueId v : graph.inputs()) impl->inputs.push_back(info_of(graph, v));
  for (ValueId v : graph.outputs()) impl->outputs.push_back(info_of(graph, v));
  return impl;
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

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

std::string human_bytes(size_t b) {
  char buf[64];
  if (b >= (1u << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  } else if (b >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%zu B", b);
  }
  return buf;
}

struct RecordHooks {
  enum class Mode { kMeasure, kRecord } mode = Mode::kMeasure;
  RunRecorder* recorder = nullptr;
  int provider = -1;
  size_t arena_bytes = 0;
  size_t measured = 0;
};

// One run of the plan over `frame`, optionally measured or recorded.
Status run_plan(const Session::Impl& impl, std::vector<Tensor>& frame, RecordHooks* hooks) {
  const auto providers = run_providers(impl);
  std::vector<std::unique_ptr<ProviderRunState>> states;
  std::vector<KernelContext::Env> envs(providers.size());
  for (size_t p = 0; p < providers.size(); ++p) {
    states.push_back(providers[p]->begin_run());
    envs[p].threads = impl.options.threads();
    envs[p].max_loop_iterations = impl.options.max_loop_iterations();
    envs[p].provider_state = states.back().get();
  }
  Executor executor(envs);
  for (auto& env : envs) env.subgraphs = &executor;
  Status st;
  ProviderRunState* rec_state =
      hooks ? states[static_cast<size_t>(hooks->provider)].get() : nullptr;
  if (hooks && hooks->mode == RecordHooks::Mode::kMeasure) hooks->recorder->start_measuring();
  if (hooks && hooks->mode == RecordHooks::Mode::kRecord) {
    st = hooks->recorder->start_recording(rec_state, hooks->arena_bytes);
  }
  if (st.ok()) st = executor.execute(*impl.plan, frame);
  if (hooks && hooks->mode == RecordHooks::Mode::kMeasure) {
    hooks->measured = hooks->recorder->stop_measuring();
  }
  if (hooks && hooks->mode == RecordHooks::Mode::kRecord) {
    Status stop = hooks->recorder->stop_recording(rec_state);
    if (st.ok()) st = stop;
  }
  for (size_t p = 0; p < providers.size(); ++p) {
    Status end = providers[p]->end_run(states[p].get());
    if (st.ok()) st = end;
  }
  return st;
}

// A device copy of `t` that owns its memory.
Result<Tensor> device_clone(const Tensor& t) {
  Tensor c;
  try {
    c = Tensor::empty(t.dtype(), t.shape(), t.device());
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  }
  RECUR_RETURN_IF_ERROR(copy_tensor(t, c));
  return c;
}

// SessionOptions::cuda_graphs: measure, record, then replay, per input signature.
Status run_recorded(const Session::Impl& impl, std::vector<Tensor>& frame) {
  const SubgraphPlan& plan = *impl.plan;
  const auto providers = run_providers(impl);
  const ExecutionProvider& rp = *providers[static_cast<size_t>(impl.recorder_provider)];
  std::string key;
  for (ValueId slot : plan.input_slots) {
    const Tensor& t = frame[static_cast<size_t>(slot)];
    key += std::string(dtype_name(t.dtype())) + shape_to_string(t.shape()) + "@" +
           t.device().to_string() + ";";
  }
  std::shared_ptr<GraphEntry> entry;
  {
    std::lock_guard lock(impl.graphs_mu);
    auto& e = impl.graphs[key];
    if (!e) e = std::make_shared<GraphEntry>();
    entry = e;
  }
  std::lock_guard lock(entry->mu);
  if (entry->failed) return run_plan(impl, frame, nullptr);
  if (!entry->measured) {
    entry->recorder = rp.make_recorder();
    if (!entry->recorder) {
      entry->failed = true;
      return run_plan(impl, frame, nullptr);
    }
    RecordHooks h;
    h.mode = RecordHooks::Mode::kMeasure;
    h.recorder = entry->recorder.get();
    h.provider = impl.recorder_provider;
    RECUR_RETURN_IF_ERROR(run_plan(impl, frame, &h));
    entry->arena_bytes = h.measured;
    entry->measured = true;
    return ok_status();
  }
  const Device dev = rp.device();
  if (!entry->recorded) {
    // The recording reads its inputs from device buffers it keeps; each replay refills them.
    std::vector<Tensor> rframe = new_frame(plan);
    for (ValueId slot : plan.input_slots) {
      const Tensor& t = frame[static_cast<size_t>(slot)];
      if (!t.defined()) continue;
      Tensor buf;
      try {
        buf = Tensor::empty(t.dtype(), t.shape(), dev);
      } catch (const Error& e) {
        return Status(e.code(), e.what());
      }
      RECUR_RETURN_IF_ERROR(copy_tensor(t, buf));
      entry->inputs.push_back(buf);
      rframe[static_cast<size_t>(slot)] = buf;
    }
    RecordHooks h;
    h.mode = RecordHooks::Mode::kRecord;
    h.recorder = entry->recorder.get();
    h.provider = impl.recorder_provider;
    // Slack for allocations that differ between runs (a cuDNN workspace sized per call).
    h.arena_bytes = entry->arena_bytes + entry->arena_bytes / 8 + (size_t{4} << 20);
    Status st = run_plan(impl, rframe, &h);
    if (!st.ok()) {
      entry->failed = true;
      entry->why = st.message();
      entry->inputs.clear();
      entry->recorder.reset();
      return run_plan(impl, frame, nullptr);
    }
    entry->frame = std::move(rframe);
    entry->recorded = true;
  } else {
    size_t k = 0;
    for (ValueId slot : plan.input_slots) {
      const Tensor& t = frame[static_cast<size_t>(slot)];
      if (!t.defined()) continue;
      RECUR_RETURN_IF_ERROR(copy_tensor(t, entry->inputs[k++]));
    }
  }
  {
    std::vector<std::unique_ptr<ProviderRunState>> states;
    for (const ExecutionProvider* p : providers) states.push_back(p->begin_run());
    Status st = entry->recorder->replay(states[static_cast<size_t>(impl.recorder_provider)].get());
    for (size_t p = 0; p < providers.size(); ++p) {
      Status end = providers[p]->end_run(states[p].get());
      if (st.ok()) st = end;
    }
    RECUR_RETURN_IF_ERROR(st);
  }
  // The recording's outputs are overwritten by the next replay: hand out copies.
  for (ValueId slot : plan.output_slots) {
    const Tensor& t = entry->frame[static_cast<size_t>(slot)];
    if (!t.defined()) continue;
    if (t.is_cpu()) {
      frame[static_cast<size_t>(slot)] = t;
    } else {
      RECUR_ASSIGN_OR_RETURN(frame[static_cast<size_t>(slot)], device_clone(t));
    }
  }
  return ok_status();
}

}  // namespace

Session::Session(const std::string& model_path, const SessionOptions& options)
    : impl_(create(load_model(model_path), options)) {}

Session Session::from_bytes(const void* data, size_t size, const SessionOptions& options,
                            const std::string& base_dir) {
  return Session(create(load_model_from_bytes(data, size, base_dir, "<memory>"), options));
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs; }
const std::vector<NodeAssignment>& Session::assignment() const { return impl_->assignment; }
const std::vector<std::string>& Session::providers() const { return impl_->provider_names; }

Outputs Session::run(const Feeds& feeds, const RunOptions& options) const {
  const Impl& impl = *impl_;
  if (impl.options.plan_only()) {
    throw Error(ErrorCode::kFailedPrecondition,
                impl.model.path + ": this session was created with plan_only and cannot run");
  }
  const SubgraphPlan& plan = *impl.plan;
  std::vector<Tensor> frame = new_frame(plan);
  std::vector<char> fed(impl.inputs.size(), 0);
  for (const auto& [name, tensor] : feeds) {
    size_t i = 0;
    while (i < impl.inputs.size() && impl.inputs[i].name != name) ++i;
    if (i == impl.inputs.size()) {
      std::string names;
      for (const auto& in : impl.inputs) names += (names.empty() ? "" : ", ") + in.name;
      throw Error(ErrorCode::kInvalidArgument, impl.model.path + ": unknown input '" + name +
                                                   "' (the model's inputs are: " + names + ")");
    }
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
      size_t i = 0;
      while (i < impl.outputs.size() && impl.outputs[i].name != name) ++i;
      if (i == impl.outputs.size()) {
        throw Error(ErrorCode::kInvalidArgument,
                    impl.model.path + ": the model has no output '" + name + "'");
      }
      wanted.push_back(i);
    }
  }

  Status st =
      impl.recorder_provider >= 0 ? run_recorded(impl, frame) : run_plan(impl, frame, nullptr);
  st.with_context(impl.model.path).throw_if_error();

  Outputs out;
  for (size_t i : wanted) {
    Tensor t = frame[static_cast<size_t>(plan.output_slots[i])];
    if (!t.is_cpu() && !options.outputs_on_device) {
      auto host = to_device(t, Device::cpu());
      host.status().with_context(impl.model.path).throw_if_error();
      t = std::move(host).value();
    }
    out.add(impl.outputs[i].name, std::move(t));
  }
  return out;
}

std::string Session::explain() const {
  const Impl& impl = *impl_;
  std::ostringstream os;
  os << "model: " << impl.model.path << "\n";
  os << "providers (priority order):";
  for (const auto& n : impl.provider_names) os << " " << n;
  os << "\n";
  // A provider that cannot run here declines every node for the same reason: say it once.
  std::map<std::string, std::string> unavailable;
  if (!impl.options.plan_only()) {
    for (const ExecutionProvider* p : impl.providers) {
      std::string why;
      if (!p->available(&why)) {
        unavailable[p->name()] = why;
        os << "  " << p->name() << " is unavailable here and declines every node: " << why << "\n";
      }
    }
  }
  os << "\n";
  size_t wn = 4, wo = 2, wp = 8;
  for (const auto& a : impl.assignment) {
    wn = std::max(wn, a.node.size());
    wo = std::max(wo, a.op.size());
    wp = std::max(wp, a.provider.size());
  }
  os << pad("node", wn) << "  " << pad("op", wo) << "  " << pad("provider", wp)
     << "  why not a higher-priority provider / notes\n";
  os << std::string(wn, '-') << "  " << std::string(wo, '-') << "  " << std::string(wp, '-') << "  "
     << std::string(40, '-') << "\n";
  for (const auto& a : impl.assignment) {
    std::vector<std::string> lines;
    for (const auto& d : a.declined) {
      auto u = unavailable.find(d.provider);
      if (u != unavailable.end() && u->second == d.reason) continue;  // said in the header
      lines.push_back(d.provider + ": " + d.reason);
    }
    for (const auto& n : a.notes) lines.push_back("note: " + n);
    if (lines.empty()) lines.push_back("");
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i == 0) {
        os << pad(a.node, wn) << "  " << pad(a.op, wo) << "  " << pad(a.provider, wp) << "  "
           << lines[i] << "\n";
      } else {
        os << std::string(wn + wo + wp + 6, ' ') << lines[i] << "\n";
      }
    }
  }
  const SubgraphPlan& plan = *impl.plan;
  if (!plan.copies.empty()) {
    os << "\ndevice copies:\n";
    for (const auto& c : plan.copies) {
      os << "  " << c.value << ": " << c.from.to_string() << " -> " << c.to.to_string() << " for "
         << c.consumer << (c.at_load ? " (once, at load)" : " (every run)") << "\n";
    }
  }
  if (!impl.folded.empty()) {
    os << "\nshape computations folded into constants at load:";
    for (const auto& f : impl.folded) os << " " << f;
    os << "\n";
  }
  if (impl.options.cuda_graphs()) {
    if (impl.recorder_provider >= 0) {
      os << "\ncuda graphs: each input signature is recorded on its second run and replayed "
            "after\n";
    } else {
      os << "\ncuda graphs: not used: " << impl.graphs_off << "\n";
    }
    std::lock_guard lock(impl.graphs_mu);
    for (const auto& [key, e] : impl.graphs) {
      if (e->failed && !e->why.empty()) os << "  " << key << " not recorded: " << e->why << "\n";
    }
  }
  if (plan.released_bytes) {
    os << "\nconstant weights released after repacking: " << human_bytes(plan.released_bytes)
       << "\n";
  }
  if (impl.options.plan_only()) os << "\n(plan only: no kernel was compiled)\n";
  return os.str();
}

const Tensor& Outputs::operator[](std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return tensors_[i];
  throw Error(ErrorCode::kInvalidArgument, "no output named '" + std::string(name) + "'");
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
