#include "runtime/provider/execution_provider.h"

#include <algorithm>
#include <set>

namespace recur {

namespace {
const TypeInfo kUnknownType;

std::string registry_key(std::string_view domain, std::string_view op) {
  if (domain.empty() || domain == "ai.onnx") return std::string(op);
  return std::string(domain) + "::" + std::string(op);
}
}  // namespace

const TypeInfo& CompileContext::input_type(size_t i) const {
  if (!node_.has_input(i)) return kUnknownType;
  return graph_.value(node_.inputs[i]).type;
}

const TypeInfo& CompileContext::output_type(size_t i) const {
  if (!node_.has_output(i)) return kUnknownType;
  return graph_.value(node_.outputs[i]).type;
}

const Tensor* CompileContext::constant_input(size_t i) const {
  if (!node_.has_input(i)) return nullptr;
  return graph_.constant(node_.inputs[i]);
}

void KernelRegistry::add(KernelDef def) {
  std::string key = registry_key(def.domain, def.op_type);
  defs_.emplace(std::move(key), std::move(def));
}

const KernelDef* KernelRegistry::find(std::string_view domain, std::string_view op,
                                      int opset) const {
  auto [lo, hi] = defs_.equal_range(registry_key(domain, op));
  for (auto it = lo; it != hi; ++it) {
    if (opset >= it->second.since && opset <= it->second.until) return &it->second;
  }
  return nullptr;
}

std::string KernelRegistry::why_not(std::string_view domain, std::string_view op, int opset) const {
  const std::string key = registry_key(domain, op);
  auto [lo, hi] = defs_.equal_range(key);
  if (lo == hi) return "unsupported op " + key + " (opset " + std::to_string(opset) + ")";
  std::string ranges;
  for (auto it = lo; it != hi; ++it) {
    if (!ranges.empty()) ranges += ", ";
    ranges += std::to_string(it->second.since);
    if (it->second.until == INT_MAX) {
      ranges += "+";
    } else if (it->second.until != it->second.since) {
      ranges += '-';
      ranges += std::to_string(it->second.until);
    }
  }
  return "no " + key + " kernel for opset " + std::to_string(opset) + " (has " + ranges + ")";
}

std::shared_ptr<const KernelRegistry> make_registry(
    const std::function<void(KernelRegistry&)>& fill) {
  auto r = std::make_shared<KernelRegistry>();
  fill(*r);
  return r;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::set<std::string> names;
  for (const auto& [key, def] : defs_) names.insert(key);
  return {names.begin(), names.end()};
}

Status ExecutionProvider::configure(const ProviderConfig& config) {
  RECUR_RETURN_IF_ERROR(SettingsParser(name_).parse(config.settings));
  base_options_.threads = config.threads;
  base_options_.plan_only = config.plan_only;
  base_options_.deterministic = config.deterministic;
  return ok_status();
}

Claim ExecutionProvider::claim(const Node& node, const Graph& graph) const {
  const KernelDef* def = registry().find(node.domain, node.op_type, node.opset);
  if (!def) return Claim::decline(registry().why_not(node.domain, node.op_type, node.opset));
  if (def->settings_claim) return def->settings_claim(node, graph, options());
  if (def->claim) return def->claim(node, graph);
  return Claim::accept();
}

Result<std::unique_ptr<Kernel>> ExecutionProvider::compile(CompileContext& ctx) const {
  const Node& node = ctx.node();
  const KernelDef* def = registry().find(node.domain, node.op_type, node.opset);
  if (!def || !def->create) {
    return ctx.error(ErrorCode::kNotImplemented,
                     registry().why_not(node.domain, node.op_type, node.opset));
  }
  return def->create(ctx);
}

Device ExecutionProvider::input_device(const Node& node, size_t i) const {
  const KernelDef* def = registry().find(node.domain, node.op_type, node.opset);
  if (def &&
      std::find(def->host_inputs.begin(), def->host_inputs.end(), i) != def->host_inputs.end())
    return Device::cpu();
  return device_;
}

bool ExecutionProvider::prepacks_input(const Node& node, size_t i) const {
  const KernelDef* def = registry().find(node.domain, node.op_type, node.opset);
  return def && std::find(def->prepacked_inputs.begin(), def->prepacked_inputs.end(), i) !=
                    def->prepacked_inputs.end();
}

bool ExecutionProvider::reads_shape_only(const Node& node, size_t i) const {
  const KernelDef* def = registry().find(node.domain, node.op_type, node.opset);
  return def && std::find(def->shape_only_inputs.begin(), def->shape_only_inputs.end(), i) !=
                    def->shape_only_inputs.end();
}

}  // namespace recur
