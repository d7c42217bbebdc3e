#include "runtime/engine/session/plan_builder.h"

#include <algorithm>

#include "runtime/core/device_memory.h"
#include "runtime/engine/optimize/fold_constants.h"
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

int device_key(Device d) { return d.is_cpu() ? -1 : d.index; }

// The graph attribute of `owner` that holds `g` ("then_branch", "body").
std::string attribute_holding(const Node& owner, const Graph* g) {
  for (const auto& [name, a] : owner.attributes) {
    if (a.g.get() == g) return name;
    for (const auto& sub : a.graphs)
      if (sub.get() == g) return name;
  }
  return "subgraph";
}

}  // namespace

PlanBuilder::PlanBuilder(const Graph& graph, std::vector<const ExecutionProvider*> providers,
                         const PartitionOptions& options)
    : graph_(graph),
      listed_(std::move(providers)),
      options_(options),
      plan_(std::make_unique<SubgraphPlan>()),
      node_provider_(graph.nodes().size(), -1),
      node_kernel_(graph.nodes().size(), nullptr) {
  plan_->graph = &graph;
  plan_->providers = listed_;
}

std::set<size_t> PlanBuilder::released_inputs(int idx) const {
  auto it = released_.find(idx);
  return it == released_.end() ? std::set<size_t>{} : it->second;
}

// Claims in priority order. Shape computations stay on the host: a CPU provider of the list
// takes them, or else the host provider, so they never cost a device round trip.
bool PlanBuilder::assign_node(int idx, const std::vector<char>& host_node, std::string* unclaimed) {
  const Node& node = graph_.node(idx);
  NodeAssignment a;
  a.node = node.name;
  a.op = node.domain_op();
  a.notes = node.notes;
  const bool on_host = host_node[static_cast<size_t>(idx)] != 0;
  for (size_t p = 0; p < listed_.size(); ++p) {
    std::string why;
    if (on_host && !listed_[p]->device().is_cpu()) continue;
    if (!options_.plan_only && !listed_[p]->available(&why)) {
      a.declined.push_back({listed_[p]->name(), why});
      continue;
    }
    Claim c = listed_[p]->claim(node, graph_);
    if (c.yes) {
      node_provider_[static_cast<size_t>(idx)] = static_cast<int>(p);
      a.provider = listed_[p]->name();
      break;
    }
    a.declined.push_back({listed_[p]->name(), c.reason});
  }
  const ExecutionProvider* host = options_.host_provider;
  if (a.provider.empty() && on_host && host) {
    const Claim c = host->claim(node, graph_);
    if (c.yes) {
      auto& all = plan_->providers;
      auto it = std::find(all.begin(), all.end(), host);
      if (it == all.end()) it = all.insert(all.end(), host);
      node_provider_[static_cast<size_t>(idx)] = static_cast<int>(it - all.begin());
      a.provider = host->name();
    } else {
      a.declined.push_back({host->name(), c.reason});
    }
  }
  if (on_host && !a.provider.empty()) {
    a.notes.insert(a.notes.begin(),
                   "shape computation: runs on the host, reading only the shapes of device "
                   "tensors");
  }
  if (a.provider.empty()) {
    *unclaimed = node.describe() + " cannot run on any provider: " + join_declines(a);
    return false;
  }
  plan_->assignment.push_back(std::move(a));
  return true;
}

Status PlanBuilder::assign() {
  const std::vector<char> host_node = find_host_shape_nodes(graph_);
  // Every node is claimed even after a failure, so that the error names every node no
  // provider can run, not only the first (recur-bench and users want the whole list at once).
  std::vector<std::string> unclaimed;
  for (int idx : graph_.topo_order()) {
    std::string why;
    if (!assign_node(idx, host_node, &why)) unclaimed.push_back(std::move(why));
  }
  if (unclaimed.empty()) return ok_status();
  constexpr size_t kMaxListed = 20;
  std::string msg = unclaimed.front();
  for (size_t i = 1; i < unclaimed.size() && i < kMaxListed; ++i) msg += "\n" + unclaimed[i];
  if (unclaimed.size() > kMaxListed) {
    msg += "\n... and " + std::to_string(unclaimed.size() - kMaxListed) + " more such nodes";
  }
  return Status(ErrorCode::kNotImplemented, msg);
}

// Subgraphs (If/Loop/Scan bodies) are planned with the session's providers when their owner's
// kernel compiles them; each captured value maps to the owner's implicit input of that name.
CompileContext::SubgraphCompiler PlanBuilder::subgraph_compiler() const {
  return [this](const Graph& sub,
                const Node& owner) -> Result<std::shared_ptr<const SubgraphPlan>> {
    RECUR_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphPlan> sp, build_plan(sub, listed_, options_));
    for (ValueId r : outer_refs_read(sub)) {
      size_t found = owner.implicit_inputs.size();
      for (size_t j = 0; j < owner.implicit_inputs.size(); ++j) {
        if (graph_.value(owner.implicit_inputs[j]).name == sub.value(r).name) found = j;
      }
      if (found == owner.implicit_inputs.size()) {
        return internal_error(owner.describe() + ": captured value '" + sub.value(r).name +
                              "' is not among the node's implicit inputs");
      }
      sp->outer_from_implicit.push_back(found);
    }
    subgraphs_[owner.index].push_back({attribute_holding(owner, &sub), sp->assignment});
    return std::shared_ptr<const SubgraphPlan>(std::move(sp));
  };
}

Status PlanBuilder::plan_subgraphs(int idx) {
  const Node& node = graph_.node(idx);
  for (const auto& [name, a] : node.attributes) {
    std::vector<const Graph*> graphs;
    if (a.g) graphs.push_back(a.g.get());
    for (const auto& g : a.graphs) graphs.push_back(g.get());
    for (const Graph* g : graphs) {
      RECUR_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphPlan> sp, build_plan(*g, listed_, options_));
      subgraphs_[idx].push_back({name, sp->assignment});
    }
  }
  return ok_status();
}

// Each node's entry in the assignment lists the nodes of its subgraphs.
void PlanBuilder::attach_subgraphs() {
  const auto& order = graph_.topo_order();
  for (size_t k = 0; k < order.size() && k < plan_->assignment.size(); ++k) {
    auto it = subgraphs_.find(order[k]);
    if (it == subgraphs_.end()) continue;
    auto& subs = plan_->assignment[k].subgraphs;
    subs.insert(subs.end(), it->second.begin(), it->second.end());
    // One order whether kernels compiled them or plan-only planned them: If's then before
    // else, others by name.
    auto rank = [](const NodeAssignment::Subgraph& g) {
      return std::make_pair(g.attribute == "then_branch"   ? 0
                            : g.attribute == "else_branch" ? 1
                                                           : 2,
                            g.attribute);
    };
    std::stable_sort(subs.begin(), subs.end(),
                     [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  }
}

// Kernels read constant inputs from the host copy the graph holds, so a kernel that repacks
// its weights can release the original before anything is uploaded. A plan-only session
// compiles nothing and trusts what each kernel says it repacks (KernelDef::prepacked_inputs).
Status PlanBuilder::compile() {
  const auto& order = graph_.topo_order();
  for (size_t k = 0; k < order.size(); ++k) {
    const int idx = order[k];
    const Node& node = graph_.node(idx);
    const ExecutionProvider& provider = *plan_->providers[static_cast<size_t>(provider_of(idx))];
    if (options_.plan_only) {
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (node.has_input(i) && graph_.constant(node.inputs[i]) &&
            provider.prepacks_input(node, i))
          released_[idx].insert(i);
      }
      RECUR_RETURN_IF_ERROR(plan_subgraphs(idx));
      continue;
    }
    CompileContext ctx(
        node, graph_, provider, *options_.session, subgraph_compiler(),
        [this, idx](size_t i, bool check_only) { return drop_input_now(idx, i, check_only); });
    Result<std::unique_ptr<Kernel>> kernel = provider.compile(ctx);
    if (!kernel.ok()) return kernel.status();
    if (!kernel.value()) return internal_error(node.describe() + ": compile returned no kernel");
    for (size_t i : ctx.released_inputs()) released_[idx].insert(i);
    auto& notes = plan_->assignment[k].notes;
    notes.insert(notes.end(), ctx.notes().begin(), ctx.notes().end());
    node_kernel_[static_cast<size_t>(idx)] = kernel.value().get();
    plan_->kernels.push_back(std::move(kernel).value());
  }
  attach_subgraphs();
  return ok_status();
}

bool PlanBuilder::drop_input_now(int idx, size_t i, bool check_only) {
  Graph* owned = options_.owned_graph;
  const Node& node = graph_.node(idx);
  if (owned != &graph_ || !node.has_input(i)) return false;
  const ValueId v = node.inputs[i];
  const Tensor* t = graph_.constant(v);
  if (!t) return false;
  // Another reader, an output of the graph or a second position of this node keeps it.
  const auto& readers = graph_.value(v).consumers;
  if (std::any_of(readers.begin(), readers.end(), [&](int c) { return c != idx; })) return false;
  if (std::count(node.inputs.begin(), node.inputs.end(), v) != 1) return false;
  const auto& outs = graph_.outputs();
  if (std::find(outs.begin(), outs.end(), v) != outs.end()) return false;
  // The memory dies with the initializer only where no other tensor shares its owner (a view,
  // another initializer in the same external-data mapping).
  const bool frees = t->owner() != nullptr && t->owner().use_count() == 1;
  if (check_only) return frees;
  dropped_.emplace_back(v, t->nbytes());
  owned->remove_initializer(v);
  return frees;
}

Result<ValueId> PlanBuilder::slot_on(ValueId v, Device dev, const Node& consumer) {
  if (home_[static_cast<size_t>(v)] == dev) return v;
  const auto key = std::make_pair(v, device_key(dev));
  if (auto it = copies_.find(key); it != copies_.end()) return it->second;
  const ValueId slot = static_cast<ValueId>(plan_->num_slots++);
  copies_.emplace(key, slot);
  const Tensor* constant = graph_.constant(v);
  plan_->copies.push_back(PlannedCopy{graph_.value(v).name, home_[static_cast<size_t>(v)], dev,
                                      consumer.name, constant != nullptr});
  if (constant) {
    // A constant is uploaded once, at load, instead of copied by every run.
    if (!options_.plan_only) {
      RECUR_ASSIGN_OR_RETURN(Tensor on_device, to_device(*constant, dev));
      plan_->constants.emplace_back(slot, std::move(on_device));
    }
    return slot;
  }
  Step copy;
  copy.kind = Step::Kind::kCopy;
  copy.src = v;
  copy.dst = slot;
  copy.device = dev;
  plan_->steps.push_back(std::move(copy));
  return slot;
}

Result<Step> PlanBuilder::kernel_step(int idx) {
  const Node& node = graph_.node(idx);
  const int p = provider_of(idx);
  const ExecutionProvider& provider = *plan_->providers[static_cast<size_t>(p)];
  Step s;
  s.kind = Step::Kind::kKernel;
  s.node = idx;
  s.kernel = node_kernel_[static_cast<size_t>(idx)];
  s.provider = p;
  if (const KernelDef* def = provider.registry().find(node.domain, node.op_type, node.opset)) {
    s.takes_strings = def->takes_strings;
    s.takes_sequences = def->takes_sequences;
    s.takes_maps = def->takes_maps;
    s.takes_optionals = def->takes_optionals;
  }
  const std::set<size_t>& rel = released_[idx];
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    const bool shape_only = v != kNoValue && provider.reads_shape_only(node, i);
    const Device in_dev =
        shape_only ? home_[static_cast<size_t>(v)] : provider.input_device(node, i);
    s.input_devices.push_back(in_dev);
    s.shape_only.push_back(shape_only ? 1 : 0);
    if (v == kNoValue || rel.count(i)) {
      // A released input is never read at run time; it needs no slot and no copy.
      s.inputs.push_back(kNoValue);
    } else if (shape_only) {
      // Read where it lives: a device tensor's shape is on the host.
      s.inputs.push_back(v);
    } else {
      RECUR_ASSIGN_OR_RETURN(ValueId slot, slot_on(v, in_dev, node));
      s.inputs.push_back(slot);
    }
  }
  for (ValueId v : node.implicit_inputs) {
    RECUR_ASSIGN_OR_RETURN(ValueId slot, slot_on(v, provider.device(), node));
    s.implicit_inputs.push_back(slot);
  }
  s.outputs = node.outputs;
  return s;
}

// Constants the plan still reads on the host stay; those that every kernel reading them
// repacked are released, and the session frees its copy.
void PlanBuilder::keep_host_constants() {
  const size_t num_values = graph_.num_values();
  std::vector<char> needed(num_values, 0);
  auto mark = [&](ValueId slot) {
    if (slot != kNoValue && static_cast<size_t>(slot) < num_values)
      needed[static_cast<size_t>(slot)] = 1;
  };
  for (const Step& s : plan_->steps) {
    if (s.kind == Step::Kind::kCopy) mark(s.src);
    for (ValueId v : s.inputs) mark(v);
    for (ValueId v : s.implicit_inputs) mark(v);
  }
  for (ValueId v : graph_.outputs()) mark(v);
  for (ValueId v : graph_.inputs()) mark(v);
  for (const auto& [v, t] : graph_.initializers()) {
    if (needed[static_cast<size_t>(v)]) {
      plan_->constants.emplace_back(v, t);
      continue;
    }
    bool was_released = false;
    for (const auto& [node, positions] : released_) {
      for (size_t i : positions) was_released |= graph_.node(node).inputs[i] == v;
    }
    if (was_released) {
      plan_->released_bytes += t.nbytes();
      plan_->released_constants.push_back(v);
    }
  }
  for (const auto& [v, bytes] : dropped_) {
    plan_->released_bytes += bytes;
    plan_->released_constants.push_back(v);
  }
}

// A value lives where its producer ran; inputs, initializers and captured values start on
// the host. Slots past the graph's values are copies on other devices.
Status PlanBuilder::place() {
  home_.assign(graph_.num_values(), Device::cpu());
  for (int idx : graph_.topo_order()) {
    const Device d = plan_->providers[static_cast<size_t>(provider_of(idx))]->device();
    for (ValueId o : graph_.node(idx).outputs)
      if (o != kNoValue) home_[static_cast<size_t>(o)] = d;
  }
  plan_->num_slots = graph_.num_values();
  for (int idx : graph_.topo_order()) {
    RECUR_ASSIGN_OR_RETURN(Step s, kernel_step(idx));
    plan_->steps.push_back(std::move(s));
  }
  keep_host_constants();
  return ok_status();
}

// Each slot is freed after its last reader; graph outputs never are.
void PlanBuilder::liveness() {
  std::vector<int> last_use(plan_->num_slots, -1);
  for (size_t k = 0; k < plan_->steps.size(); ++k) {
    const Step& s = plan_->steps[k];
    if (s.kind == Step::Kind::kCopy) last_use[static_cast<size_t>(s.src)] = static_cast<int>(k);
    for (ValueId v : s.inputs)
      if (v != kNoValue) last_use[static_cast<size_t>(v)] = static_cast<int>(k);
    for (ValueId v : s.implicit_inputs) last_use[static_cast<size_t>(v)] = static_cast<int>(k);
  }
  for (ValueId v : graph_.outputs()) last_use[static_cast<size_t>(v)] = -1;
  for (size_t slot = 0; slot < last_use.size(); ++slot) {
    if (last_use[slot] >= 0)
      plan_->steps[static_cast<size_t>(last_use[slot])].release.push_back(
          static_cast<ValueId>(slot));
  }
  // How often the step reads each slot, counted per step and cleared after it: a count per
  // input would be quadratic in a node's inputs (a Sum of 40,000).
  std::vector<int> reads(plan_->num_slots, 0);
  for (size_t k = 0; k < plan_->steps.size(); ++k) {
    Step& s = plan_->steps[k];
    if (s.kind != Step::Kind::kKernel) continue;
    for (ValueId v : s.inputs)
      if (v != kNoValue) ++reads[static_cast<size_t>(v)];
    for (ValueId v : s.implicit_inputs) ++reads[static_cast<size_t>(v)];
    s.last_read.assign(s.inputs.size(), 0);
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const ValueId v = s.inputs[i];
      if (v == kNoValue || last_use[static_cast<size_t>(v)] != static_cast<int>(k)) continue;
      s.last_read[i] = reads[static_cast<size_t>(v)] == 1 ? 1 : 0;
    }
    for (ValueId v : s.inputs)
      if (v != kNoValue) reads[static_cast<size_t>(v)] = 0;
    for (ValueId v : s.implicit_inputs) reads[static_cast<size_t>(v)] = 0;
  }
}

std::unique_ptr<SubgraphPlan> PlanBuilder::finish() {
  plan_->input_slots = graph_.inputs();
  plan_->output_slots = graph_.outputs();
  plan_->outer_slots = outer_refs_read(graph_);
  return std::move(plan_);
}

namespace {

bool draws_random_anywhere(const Node& n) {
  if (n.draws_random()) return true;
  for (const auto& [name, a] : n.attributes) {
    auto any_in = [](const Graph* g) {
      if (!g) return false;
      for (const Node& inner : g->nodes())
        if (draws_random_anywhere(inner)) return true;
      return false;
    };
    if (any_in(a.g.get())) return true;
    for (const auto& g : a.graphs)
      if (any_in(g.get())) return true;
  }
  return false;
}

}  // namespace

OutputCones::OutputCones(const SubgraphPlan& plan) : producer_(plan.num_slots, -1) {
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const Step& s = plan.steps[k];
    if (s.kind == Step::Kind::kCopy) {
      producer_[static_cast<size_t>(s.dst)] = static_cast<int32_t>(k);
      continue;
    }
    for (ValueId o : s.outputs)
      if (o != kNoValue) producer_[static_cast<size_t>(o)] = static_cast<int32_t>(k);
    if (draws_random_anywhere(plan.graph->node(s.node))) {
      random_steps_.push_back(static_cast<uint32_t>(k));
    }
  }
}

void OutputCones::mark(const SubgraphPlan& plan, std::span<const size_t> outputs,
                       std::vector<uint8_t>& mask, std::vector<uint32_t>& todo) const {
  mask.assign(plan.steps.size(), 0);
  todo.assign(random_steps_.begin(), random_steps_.end());
  auto want = [&](ValueId v) {
    if (v == kNoValue) return;
    const int32_t q = producer_[static_cast<size_t>(v)];
    if (q >= 0 && !mask[static_cast<size_t>(q)]) todo.push_back(static_cast<uint32_t>(q));
  };
  for (size_t i : outputs) want(plan.output_slots[i]);
  // Each step is marked once, so the walk is linear in the steps and edges it reaches.
  while (!todo.empty()) {
    const uint32_t k = todo.back();
    todo.pop_back();
    if (mask[k]) continue;
    mask[k] = 1;
    const Step& s = plan.steps[k];
    if (s.kind == Step::Kind::kCopy) {
      want(s.src);
      continue;
    }
    for (ValueId v : s.inputs) want(v);
    for (ValueId v : s.implicit_inputs) want(v);
  }
}

}  // namespace recur
