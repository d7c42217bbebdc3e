#include "runtime/engine/session/partitioner.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "runtime/core/device_memory.h"
#include "runtime/engine/optimize/shape_subgraph.h"

namespace recur {

namespace {

std::string join_declines(const NodeAssignment& a) {
  std::string s;
  for (const auto& d : a.declined) {
    if (!s.empty()) s += "; ";
    s += d.provider + ": " + d.reason;
  }
  return s;
}

}  // namespace

Result<std::unique_ptr<SubgraphPlan>> build_plan(
    const Graph& graph, const std::vector<const ExecutionProvider*>& providers,
    const PartitionOptions& options) {
  auto plan = std::make_unique<SubgraphPlan>();
  plan->graph = &graph;
  plan->providers = providers;
  const size_t num_values = graph.num_values();
  const auto& order = graph.topo_order();

  // 1. Claims, in priority order. Shape computations stay on the host: a CPU provider of the
  // list takes them, or else the host provider, so they never cost a device round trip.
  std::vector<const ExecutionProvider*> all = providers;
  const std::vector<char> host_node = find_host_shape_nodes(graph);
  int host_index = -1;
  std::vector<int> node_provider(graph.nodes().size(), -1);
  std::vector<std::string> unclaimed;
  for (int idx : order) {
    const Node& node = graph.node(idx);
    NodeAssignment a;
    a.node = node.name;
    a.op = node.domain_op();
    a.notes = node.notes;
    const bool on_host = host_node[static_cast<size_t>(idx)] != 0;
    for (size_t p = 0; p < providers.size(); ++p) {
      std::string why;
      if (on_host && !providers[p]->device().is_cpu()) continue;
      if (!options.plan_only && !providers[p]->available(&why)) {
        a.declined.push_back({providers[p]->name(), why});
        continue;
      }
      Claim c = providers[p]->claim(node, graph);
      if (c.yes) {
        node_provider[static_cast<size_t>(idx)] = static_cast<int>(p);
        a.provider = providers[p]->name();
        break;
      }
      a.declined.push_back({providers[p]->name(), c.reason});
    }
    if (a.provider.empty() && on_host && options.host_provider) {
      const Claim c = options.host_provider->claim(node, graph);
      if (c.yes) {
        if (host_index < 0) {
          host_index = static_cast<int>(all.size());
          all.push_back(options.host_provider);
        }
        node_provider[static_cast<size_t>(idx)] = host_index;
        a.provider = options.host_provider->name();
      } else {
        a.declined.push_back({options.host_provider->name(), c.reason});
      }
    }
    if (on_host && !a.provider.empty()) {
      a.notes.insert(a.notes.begin(),
                     "shape computation: runs on the host, reading only the shapes of device "
                     "tensors");
    }
    if (a.provider.empty()) {
      // Go on claiming, so that the error names every node no provider can run, not only the
      // first (recur-bench and users want the whole list at once).
      unclaimed.push_back(node.describe() + " cannot run on any provider: " + join_declines(a));
      continue;
    }
    plan->assignment.push_back(std::move(a));
  }
  if (!unclaimed.empty()) {
    constexpr size_t kMaxListed = 20;
    std::string msg = unclaimed.front();
    for (size_t i = 1; i < unclaimed.size() && i < kMaxListed; ++i) msg += "\n" + unclaimed[i];
    if (unclaimed.size() > kMaxListed) {
      msg += "\n... and " + std::to_string(unclaimed.size() - kMaxListed) + " more such nodes";
    }
    return Status(ErrorCode::kNotImplemented, msg);
  }
  plan->providers = all;

  // 2. Compile. Kernels read constant inputs from the host copy held by the graph, so a
  // kernel that repacks its weights can release the original before anything is uploaded.
  std::map<int, std::set<size_t>> released;  // node -> input positions the kernel released
  std::vector<const Kernel*> node_kernel(graph.nodes().size(), nullptr);
  for (size_t k = 0; k < order.size(); ++k) {
    const int idx = order[k];
    const Node& node = graph.node(idx);
    const ExecutionProvider& provider = *all[static_cast<size_t>(node_provider[idx])];
    if (options.plan_only) continue;
    CompileContext::SubgraphCompiler compile_sub =
        [&graph, &providers, &options](
            const Graph& sub, const Node& owner) -> Result<std::shared_ptr<const SubgraphPlan>> {
      RECUR_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphPlan> sp, build_plan(sub, providers, options));
      // Map each captured value to the owner's implicit input of the same name.
      for (ValueId r : sub.outer_refs()) {
        size_t found = owner.implicit_inputs.size();
        for (size_t j = 0; j < owner.implicit_inputs.size(); ++j) {
          if (graph.value(owner.implicit_inputs[j]).name == sub.value(r).name) found = j;
        }
        if (found == owner.implicit_inputs.size()) {
          return internal_error(owner.describe() + ": captured value '" + sub.value(r).name +
                                "' is not among the node's implicit inputs");
        }
        sp->outer_from_implicit.push_back(found);
      }
      return std::shared_ptr<const SubgraphPlan>(std::move(sp));
    };
    CompileContext ctx(node, graph, provider, *options.session, compile_sub);
    Result<std::unique_ptr<Kernel>> kernel = provider.compile(ctx);
    if (!kernel.ok()) return kernel.status();
    if (!kernel.value()) return internal_error(node.describe() + ": compile returned no kernel");
    for (size_t i : ctx.released_inputs()) released[idx].insert(i);
    auto& notes = plan->assignment[k].notes;
    notes.insert(notes.end(), ctx.notes().begin(), ctx.notes().end());
    node_kernel[static_cast<size_t>(idx)] = kernel.value().get();
    plan->kernels.push_back(std::move(kernel).value());
  }

  // 3. Slots and copies. A value lives where its producer ran; inputs, initializers and
  // captured values start on the host.
  std::vector<Device> home(num_values, Device::cpu());
  for (int idx : order) {
    const Device d = all[static_cast<size_t>(node_provider[idx])]->device();
    for (ValueId o : graph.node(idx).outputs)
      if (o != kNoValue) home[static_cast<size_t>(o)] = d;
  }
  plan->num_slots = num_values;
  std::map<std::pair<ValueId, int>, ValueId> copies;  // (value, device index) -> slot
  std::vector<char> host_constant_needed(num_values, 0);
  auto device_key = [](Device d) { return d.is_cpu() ? -1 : d.index; };
  auto slot_on = [&](ValueId v, Device dev, const Node& consumer) -> Result<ValueId> {
    if (home[static_cast<size_t>(v)] == dev) return v;
    auto key = std::make_pair(v, device_key(dev));
    auto it = copies.find(key);
    if (it != copies.end()) return it->second;
    const ValueId slot = static_cast<ValueId>(plan->num_slots++);
    copies.emplace(key, slot);
    const Tensor* constant = graph.constant(v);
    PlannedCopy pc{graph.value(v).name, home[static_cast<size_t>(v)], dev, consumer.name,
                   constant != nullptr};
    plan->copies.push_back(pc);
    if (constant) {
      if (!options.plan_only) {
        RECUR_ASSIGN_OR_RETURN(Tensor on_device, to_device(*constant, dev));
        plan->constants.emplace_back(slot, std::move(on_device));
      }
    } else {
      Step copy;
      copy.kind = Step::Kind::kCopy;
      copy.src = v;
      copy.dst = slot;
      copy.device = dev;
      plan->steps.push_back(std::move(copy));
    }
    return slot;
  };

  for (int idx : order) {
    const Node& node = graph.node(idx);
    const int p = node_provider[static_cast<size_t>(idx)];
    const Device dev = all[static_cast<size_t>(p)]->device();
    Step s;
    s.kind = Step::Kind::kKernel;
    s.node = idx;
    s.kernel = node_kernel[static_cast<size_t>(idx)];
    s.provider = p;
    const ExecutionProvider& provider = *all[static_cast<size_t>(p)];
    if (const KernelDef* def = provider.registry().find(node.domain, node.op_type, node.opset)) {
      s.takes_strings = def->takes_strings;
      s.takes_sequences = def->takes_sequences;
      s.takes_optionals = def->takes_optionals;
    }
    auto& rel = released[idx];
    if (options.plan_only) {
      // Nothing was compiled: assume the kernel repacks the constant inputs it says it does.
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (node.has_input(i) && graph.constant(node.inputs[i]) && provider.prepacks_input(node, i))
          rel.insert(i);
      }
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      const bool shape_only = v != kNoValue && provider.reads_shape_only(node, i);
      const Device in_dev =
          shape_only ? home[static_cast<size_t>(v)] : provider.input_device(node, i);
      s.input_devices.push_back(in_dev);
      s.shape_only.push_back(shape_only ? 1 : 0);
      if (v == kNoValue || rel.count(i)) {
        // A released input is never read at run time; it needs no slot and no copy.
        s.inputs.push_back(kNoValue);
        continue;
      }
      if (shape_only) {
        // Read where it lives: a device tensor's shape is on the host.
        s.inputs.push_back(v);
        continue;
      }
      RECUR_ASSIGN_OR_RETURN(ValueId slot, slot_on(v, in_dev, node));
      s.inputs.push_back(slot);
    }
    for (ValueId v : node.implicit_inputs) {
      RECUR_ASSIGN_OR_RETURN(ValueId slot, slot_on(v, dev, node));
      s.implicit_inputs.push_back(slot);
    }
    s.outputs = node.outputs;
    plan->steps.push_back(std::move(s));
  }

  // 4. Constants the plan still needs on the host; the rest were repacked by their kernels.
  for (const Step& s : plan->steps) {
    auto mark = [&](ValueId slot) {
      if (slot != kNoValue && static_cast<size_t>(slot) < num_values)
        host_constant_needed[static_cast<size_t>(slot)] = 1;
    };
    if (s.kind == Step::Kind::kCopy) mark(s.src);
    for (ValueId v : s.inputs) mark(v);
    for (ValueId v : s.implicit_inputs) mark(v);
  }
  for (ValueId v : graph.outputs()) host_constant_needed[static_cast<size_t>(v)] = 1;
  for (ValueId v : graph.inputs()) host_constant_needed[static_cast<size_t>(v)] = 1;
  for (const auto& [v, t] : graph.initializers()) {
    if (host_constant_needed[static_cast<size_t>(v)]) {
      plan->constants.emplace_back(v, t);
      continue;
    }
    bool was_released = false;
    for (const auto& [node, positions] : released) {
      for (size_t i : positions) was_released |= graph.node(node).inputs[i] == v;
    }
    if (was_released) {
      plan->released_bytes += t.nbytes();
      plan->released_constants.push_back(v);
    }
  }

  // 5. Liveness: free each slot after its last reader.
  std::vector<int> last_use(plan->num_slots, -1);
  for (size_t k = 0; k < plan->steps.size(); ++k) {
    const Step& s = plan->steps[k];
    if (s.kind == Step::Kind::kCopy) last_use[static_cast<size_t>(s.src)] = static_cast<int>(k);
    for (ValueId v : s.inputs)
      if (v != kNoValue) last_use[static_cast<size_t>(v)] = static_cast<int>(k);
    for (ValueId v : s.implicit_inputs) last_use[static_cast<size_t>(v)] = static_cast<int>(k);
  }
  for (ValueId v : graph.outputs()) last_use[static_cast<size_t>(v)] = -1;
  for (size_t slot = 0; slot < last_use.size(); ++slot) {
    if (last_use[slot] >= 0)
      plan->steps[static_cast<size_t>(last_use[slot])].release.push_back(
          static_cast<ValueId>(slot));
  }

  plan->input_slots = graph.inputs();
  plan->output_slots = graph.outputs();
  plan->outer_slots = graph.outer_refs();
  return plan;
}

}  // namespace recur
