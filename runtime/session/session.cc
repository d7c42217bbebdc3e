// The public Session: load, optimise, infer shapes, partition, compile; then run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>

#include "providers/reference/reference_provider.h"
#include "recur/session.h"
#include "runtime/core/device_memory.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/onnx/model_loader.h"
#include "runtime/optimize/optimizer.h"
#include "runtime/session/executor.h"
#include "runtime/session/partitioner.h"
#include "runtime/session/plan.h"
#include "runtime/session/provider_factory.h"

namespace recur {

struct Session::Impl {
  Model model;
  SessionOptions options;
  std::vector<std::unique_ptr<ExecutionProvider>> owned_providers;
  std::vector<const ExecutionProvider*> providers;
  std::vector<std::string> provider_names;
  std::unique_ptr<SubgraphPlan> plan;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<NodeAssignment> assignment;
};

namespace {

Status infer_recursive(Graph& g, const ExecutionProvider& rules) {
  auto rule_for = [&rules](const Node& n) -> InferFn {
    const KernelDef* def = rules.registry().find(n.domain, n.op_type, n.opset);
    return def ? def->infer : InferFn();
  };
  RECUR_RETURN_IF_ERROR(infer_shapes(g, rule_for));
  for (const Node& n : g.nodes()) {
    for (const auto& [name, a] : n.attributes) {
      std::vector<Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (const auto& sg : a.graphs) subs.push_back(sg.get());
      for (Graph* sub : subs) {
        for (ValueId r : sub->outer_refs()) {
          const ValueId here = g.find(sub->value(r).name);
          if (here != kNoValue) sub->mutable_value(r).type = g.value(here).type;
        }
        RECUR_RETURN_IF_ERROR(infer_recursive(*sub, rules));
      }
    }
  }
  return ok_status();
}

ValueInfo info_of(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  ValueInfo vi;
  vi.name = val.name;
  vi.dtype = val.type.dtype;
  vi.shape = val.type.shape;
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
    if (it == factories.end()) {
      return invalid_argument("unknown provider '" + name + "' (this build has: " + known + ")");
    }
    if (!seen.insert(name).second) {
      return invalid_argument("provider '" + name + "' is listed twice");
    }
    impl.owned_providers.push_back(it->make());
  }
  // Settings are "<provider>.<key>"; each provider checks its own.
  for (const auto& [key, value] : impl.options.config()) {
    const auto dot = key.find('.');
    const std::string owner = dot == std::string::npos ? "" : key.substr(0, dot);
    if (std::none_of(factories.begin(), factories.end(),
                     [&](const ProviderFactory& f) { return f.name == owner; })) {
      return invalid_argument("unknown setting '" + key +
                              "': settings are named <provider>.<key>, with a provider of: " +
                              known);
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

std::shared_ptr<const Session::Impl> create(Result<Model> loaded, const SessionOptions& options) {
  if (!loaded.ok()) loaded.status().throw_if_error();
  auto impl = std::make_shared<Session::Impl>();
  impl->model = std::move(loaded).value();
  impl->options = options;
  Graph& graph = *impl->model.graph;
  const std::string& file = impl->model.path;

  create_providers(*impl).throw_if_error();
  if (options.optimize()) optimize_graph(graph).with_context(file).throw_if_error();
  auto rules = make_reference_provider();
  infer_recursive(graph, *rules).with_context(file).throw_if_error();

  PartitionOptions popts;
  popts.session = &impl->options;
  popts.plan_only = options.plan_only();
  auto plan = build_plan(graph, impl->providers, popts);
  if (!plan.ok()) plan.status().with_context(file).throw_if_error();
  impl->plan = std::move(plan).value();
  impl->assignment = impl->plan->assignment;
  // Kernels keep their own repacked copies (on the host or a device): free the originals.
  for (ValueId v : impl->plan->released_constants) graph.remove_initializer(v);

  for (ValueId v : graph.inputs()) impl->inputs.push_back(info_of(graph, v));
  for (ValueId v : graph.outputs()) impl->outputs.push_back(info_of(graph, v));
  return impl;
}

Status check_feed(const ValueInfo& want, const Tensor& t) {
  if (!t.defined()) return invalid_argument("input '" + want.name + "' is an empty tensor");
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
      return invalid_argument("input '" + want.name + "' has shape " +
                              shape_to_string(t.shape()) + " but the model expects " +
                              want.shape_string() + ": dimension " + std::to_string(i) +
                              " must be " + std::to_string(dims[i].value));
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
      throw Error(ErrorCode::kInvalidArgument, impl.model.path + ": input '" + name +
                                                   "' is fed twice");
    }
    check_feed(impl.inputs[i], tensor).with_context(impl.model.path).throw_if_error();
    fed[i] = 1;
    frame[static_cast<size_t>(plan.input_slots[i])] = tensor;
  }
  for (size_t i = 0; i < impl.inputs.size(); ++i) {
    if (!fed[i] && !impl.inputs[i].has_default) {
      throw Error(ErrorCode::kInvalidArgument,
                  impl.model.path + ": missing input '" + impl.inputs[i].name + "' (" +
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

  std::vector<std::unique_ptr<ProviderRunState>> states;
  std::vector<KernelContext::Env> envs(impl.providers.size());
  for (size_t p = 0; p < impl.providers.size(); ++p) {
    states.push_back(impl.providers[p]->begin_run());
    envs[p].threads = impl.options.threads();
    envs[p].max_loop_iterations = impl.options.max_loop_iterations();
    envs[p].provider_state = states.back().get();
  }
  Executor executor(envs);
  for (auto& env : envs) env.subgraphs = &executor;
  Status st = executor.execute(plan, frame);
  for (size_t p = 0; p < impl.providers.size(); ++p) {
    Status end = impl.providers[p]->end_run(states[p].get());
    if (st.ok()) st = end;
  }
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
  os << "\n\n";
  size_t wn = 4, wo = 2, wp = 8;
  for (const auto& a : impl.assignment) {
    wn = std::max(wn, a.node.size());
    wo = std::max(wo, a.op.size());
    wp = std::max(wp, a.provider.size());
  }
  os << pad("node", wn) << "  " << pad("op", wo) << "  " << pad("provider", wp)
     << "  why not a higher-priority provider / notes\n";
  os << std::string(wn, '-') << "  " << std::string(wo, '-') << "  " << std::string(wp, '-')
     << "  " << std::string(40, '-') << "\n";
  for (const auto& a : impl.assignment) {
    std::vector<std::string> lines;
    for (const auto& d : a.declined) lines.push_back(d.provider + ": " + d.reason);
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
      os << "  " << c.value << ": " << c.from.to_string() << " -> " << c.to.to_string()
         << " for " << c.consumer << (c.at_load ? " (once, at load)" : " (every run)") << "\n";
    }
  }
  if (plan.released_bytes) {
    os << "\nconstant weights released after repacking: " << human_bytes(plan.released_bytes)
       << "\n";
  }
  if (impl.options.plan_only()) os << "\n(plan only: no kernel was compiled)\n";
  return os.str();
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
