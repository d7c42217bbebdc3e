// The blocking pass (optimizer.h, block_conv_chains): chains of 2-D convolutions, pools and the
// elementwise nodes between them pass channel-blocked tensors (runtime/graph/blocked.h) from
// one node to the next. Each convolution otherwise copies X into its primitive's nChw16c and Y
// back out of it: a CRNN's four such convolutions at batch 64 spent 20 of 92 ms in those
// copies. A chain starts with one recur::ToBlocked per value it reads from outside and ends
// with one recur::FromBlocked per value read outside it (which keeps the value's name), so the
// rest of the graph sees what it saw before.
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"
#include "runtime/graph/blocked.h"
#include "runtime/graph/fused_conv.h"

namespace recur {

namespace {

// kHead: a convolution of few input channels reading plain X and writing the blocked form (an
// image's or a spectrogram's first layer, which oneDNN computes from plain X anyway).
// kBinary: an Add, Sub, Mul or Div whose operands are both blocked (or one-element constants).
enum class Role { kNone, kConv, kHead, kPool, kElementwise, kBinary };

// The most input channels a chain's first convolution reads plain.
constexpr int64_t kMaxHeadChannels = 4;

// float32 [N, C, H, W] with C known and a whole number of blocks.
bool blockable_value(const Graph& g, ValueId v, int64_t block) {
  if (v == kNoValue) return false;
  const TypeInfo& t = g.value(v).type;
  return t.dtype == DType::kFloat32 && t.rank() == 4 && (*t.shape)[1].is_fixed() &&
         (*t.shape)[1].value > 0 && (*t.shape)[1].value % block == 0;
}

Attribute int_attribute(int64_t v) {
  Attribute a;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}

bool one_output(const Node& n) {
  return n.outputs.size() == 1 && n.outputs[0] != kNoValue && n.implicit_inputs.empty();
}

// Conv or FusedConv of one group with W a float32 constant of whole blocks of output channels,
// reading whole blocks of channels or (`head`) at most kMaxHeadChannels. Depthwise ones stay
// out: the oneDNN provider runs them on its own loop in NCHW, with no copy to save.
std::optional<Node> blocked_conv(const Graph& g, const Node& n, int64_t block, bool* head) {
  const bool conv = n.domain.empty() && n.op_type == "Conv";
  const bool fused = n.domain == kFusedConvDomain && n.op_type == kFusedConvOp;
  if ((!conv && !fused) || !one_output(n)) return std::nullopt;
  const TypeInfo& x = g.value(n.inputs[0]).type;
  *head = x.dtype == DType::kFloat32 && x.rank() == 4 && (*x.shape)[1].is_fixed() &&
          (*x.shape)[1].value > 0 && (*x.shape)[1].value <= kMaxHeadChannels;
  if (!*head && !blockable_value(g, n.inputs[0], block)) return std::nullopt;
  if (const Attribute* group = n.attr("group"); group && group->i != 1) return std::nullopt;
  const Tensor* w = n.has_input(1) ? g.constant(n.inputs[1]) : nullptr;
  const int64_t c = (*g.value(n.inputs[0]).type.shape)[1].value;
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4 || w->dim(0) % block != 0 ||
      w->dim(1) != c)
    return std::nullopt;
  if (n.has_input(2) && !g.constant(n.inputs[2])) return std::nullopt;
  Node b = n;
  b.domain = kBlockedDomain;
  b.op_type = kBlockedConvOp;
  b.opset = 1;
  b.attributes[kBlockAttr] = int_attribute(block);
  return b;
}

// The 2-D window attribute `name` of `n`, where it has one, extended to the blocked form's third
// axis: `at_end` appended (kernel 1, stride 1, dilation 1), or pads [t, l, b, r] as
// [t, l, 0, b, r, 0].
void extend_ints(Node& n, const char* name, std::initializer_list<int64_t> at_end) {
  auto it = n.attributes.find(name);
  if (it == n.attributes.end()) return;
  std::vector<int64_t>& v = it->second.ints;
  if (std::string(name) == "pads" && v.size() == 4) {
    v = {v[0], v[1], 0, v[2], v[3], 0};
    return;
  }
  v.insert(v.end(), at_end);
}

// MaxPool (no Indices) or AveragePool over H and W, undilated, as the pool of kernel
// [kh, kw, 1] over the blocked form; GlobalAveragePool as the ReduceMean over H and W that
// keeps them (opset 13, axes an attribute).
std::optional<Node> blocked_pool(const Graph& g, const Node& n, int64_t block) {
  if (n.domain.empty() && n.op_type == "GlobalAveragePool" && one_output(n) &&
      blockable_value(g, n.inputs[0], block)) {
    Node b = n;
    b.op_type = "ReduceMean";
    b.opset = 13;
    b.attributes.clear();
    Attribute axes;
    axes.type = AttrType::kInts;
    axes.ints = {2, 3};
    b.attributes["axes"] = axes;
    b.attributes["keepdims"] = int_attribute(1);
    return b;
  }
  if (!n.domain.empty() || (n.op_type != "MaxPool" && n.op_type != "AveragePool")) {
    return std::nullopt;
  }
  if (n.outputs.empty() || n.outputs[0] == kNoValue || n.has_output(1) ||
      !n.implicit_inputs.empty() || !blockable_value(g, n.inputs[0], block))
    return std::nullopt;
  const Attribute* kernel = n.attr("kernel_shape");
  if (!kernel || kernel->ints.size() != 2) return std::nullopt;
  if (const Attribute* d = n.attr("dilations")) {
    for (int64_t v : d->ints)
      if (v != 1) return std::nullopt;
  }
  if (const Attribute* s = n.attr("strides"); s && s->ints.size() != 2) return std::nullopt;
  if (const Attribute* p = n.attr("pads"); p && p->ints.size() != 4) return std::nullopt;
  Node b = n;
  b.outputs.resize(1);
  extend_ints(b, "kernel_shape", {1});
  extend_ints(b, "strides", {1});
  extend_ints(b, "dilations", {1});
  extend_ints(b, "pads", {});
  return b;
}

// The elementwise operators a chain carries through as they are (one float32 input; Clip's
// bounds constants).
bool elementwise(const Graph& g, const Node& n, int64_t block) {
  static const char* const kOps[] = {"Relu", "LeakyRelu", "Sigmoid",     "Tanh",
                                     "Elu",  "HardSwish", "HardSigmoid", "Clip"};
  if (!n.domain.empty() || !one_output(n) || !blockable_value(g, n.inputs[0], block)) return false;
  bool known = false;
  for (const char* op : kOps) known = known || n.op_type == op;
  if (!known) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (n.inputs[i] != kNoValue && !g.constant(n.inputs[i])) return false;
  }
  return n.op_type == "Clip" || n.inputs.size() == 1;
}

// A one-element float32 constant: broadcast over the blocked form as over the plain one.
bool scalar_constant(const Graph& g, ValueId v) {
  const Tensor* t = v == kNoValue ? nullptr : g.constant(v);
  return t && t->dtype() == DType::kFloat32 && t->numel() == 1 && t->rank() <= 4;
}

// Add, Sub, Mul or Div (opset 7 on: numpy broadcasting) of two [N, C, H, W] tensors of the same
// whole blocks of channels (a residual sum; a squeeze-and-excitation scale [N, C, 1, 1]), or of
// one such and a one-element constant: broadcasting pairs the blocked forms' elements as it
// pairs the plain ones', since C is never broadcast.
bool binary(const Graph& g, const Node& n, int64_t block) {
  if (!n.domain.empty() || !one_output(n) || n.opset < 7 || n.inputs.size() != 2) return false;
  if (n.op_type != "Add" && n.op_type != "Sub" && n.op_type != "Mul" && n.op_type != "Div")
    return false;
  const ValueId a = n.inputs[0], b = n.inputs[1];
  if (scalar_constant(g, a)) return blockable_value(g, b, block);
  if (scalar_constant(g, b)) return blockable_value(g, a, block);
  if (!blockable_value(g, a, block) || !blockable_value(g, b, block)) return false;
  return (*g.value(a).type.shape)[1].value == (*g.value(b).type.shape)[1].value;
}

// The inputs of `n` (a chain member) that are blocked tensors: X, or a binary node's operands
// other than one-element constants.
std::vector<size_t> data_inputs(const Graph& g, const Node& n, Role role) {
  if (role != Role::kBinary) return {0};
  std::vector<size_t> in;
  for (size_t k = 0; k < 2; ++k) {
    if (!scalar_constant(g, n.inputs[k])) in.push_back(k);
  }
  return in;
}

struct Candidate {
  Role role = Role::kNone;
  Node blocked;  // the node's blocked form
};

int find(std::vector<int>& parent, int i) {
  while (parent[static_cast<size_t>(i)] != i) {
    parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
    i = parent[static_cast<size_t>(i)];
  }
  return i;
}

Node copy_node(const char* op, std::string name, ValueId from, ValueId to, int64_t block,
               std::string note) {
  Node n;
  n.name = std::move(name);
  n.op_type = op;
  n.domain = kBlockedDomain;
  n.opset = 1;
  n.inputs = {from};
  n.outputs = {to};
  if (block > 0) n.attributes[kBlockAttr] = int_attribute(block);
  n.notes.push_back(std::move(note));
  return n;
}

// Whether blocking `members` saves at least as many copies as its ToBlocked and FromBlocked
// nodes make. Unblocked, a convolution of more than 1x1 copies X into oneDNN's blocked layout
// and Y out of it; a chain's plain-X head copies Y (or leaves it for a ToBlocked); 1x1
// convolutions (a matmul in NCHW), pools and elementwise nodes copy nothing. A convolution and
// nothing else of weight (a pool or another convolution) never pays.
bool chain_pays(const Graph& g, const std::vector<int>& members,
                const std::vector<Candidate>& cand) {
  std::unordered_set<int> in_chain(members.begin(), members.end());
  std::unordered_set<ValueId> copied_in;
  size_t copied_out = 0, saved = 0;
  int convs = 0, heavy = 0;
  for (int i : members) {
    const Node& n = g.node(i);
    const Role r = cand[static_cast<size_t>(i)].role;
    convs += r == Role::kConv || r == Role::kHead;
    heavy += r != Role::kElementwise && r != Role::kBinary;
    if (r == Role::kHead) saved += 1;
    if (r == Role::kConv) {
      const Tensor* w = g.constant(n.inputs[1]);
      saved += w->dim(2) * w->dim(3) > 1 ? 2 : 0;
    }
    if (r != Role::kHead) {
      for (size_t k : data_inputs(g, n, r)) {
        const int p = g.value(n.inputs[k]).producer;
        if (p < 0 || !in_chain.count(p)) copied_in.insert(n.inputs[k]);
      }
    }
    const Value& out = g.value(n.outputs[0]);
    bool read_outside = out.is_graph_output;
    for (int c : out.consumers) read_outside = read_outside || !in_chain.count(c);
    copied_out += read_outside;
  }
  return convs > 0 && heavy >= 2 && saved >= copied_in.size() + copied_out;
}

// Rewrites the chain `members` (node indices in topological order), in blocks of `block`
// channels, or `channels_last`: each value in one block of all its channels.
void rewrite_chain(Graph& g, const std::vector<int>& members, std::vector<Candidate>& cand,
                   int64_t block, bool channels_last) {
  std::vector<bool> in_chain(g.nodes().size(), false);
  for (int i : members) in_chain[static_cast<size_t>(i)] = true;
  std::unordered_map<ValueId, ValueId> blocked;  // plain value -> its blocked form
  std::vector<Node> copies;
  const std::string form = channels_last ? "channels-last" : "channel-blocked";
  const std::string chain_note = form + " (runtime/graph/blocked.h) with the " +
                                 std::to_string(members.size() - 1) +
                                 " other nodes of its chain (convolutions, pools, elementwise)";
  const auto channels = [&g](ValueId v) { return (*g.value(v).type.shape)[1].value; };
  for (int i : members) {
    Node& n = cand[static_cast<size_t>(i)].blocked;
    // The blocked tensors each member reads (not a Conv's W and B, a Clip's bounds, a binary
    // node's one-element constant); a head reads X plain, but for the channels-last form
    // (oneDNN has no fast convolution from NCHW to NHWC).
    const Role role = cand[static_cast<size_t>(i)].role;
    const bool plain_x = role == Role::kHead && !channels_last;
    for (size_t k : plain_x ? std::vector<size_t>{} : data_inputs(g, n, role)) {
      const ValueId v = n.inputs[k];
      auto it = blocked.find(v);
      if (it == blocked.end()) {
        const std::string name = g.value(v).name;
        const ValueId b = g.add_value(pattern::fresh_name(g, name + "/blocked"));
        copies.push_back(copy_node(kToBlockedOp, name + "/to_blocked", v, b,
                                   channels_last ? channels(v) : block,
                                   "copies '" + name + "' into " + form + " form for a chain of " +
                                       std::to_string(members.size()) + " nodes"));
        it = blocked.emplace(v, b).first;
      }
      n.inputs[k] = it->second;
    }
    if (channels_last && (role == Role::kConv || role == Role::kHead)) {
      n.attributes[kBlockAttr] = int_attribute(g.constant(n.inputs[1])->dim(0));
    }
    const ValueId out = n.outputs[0];
    const Value& o = g.value(out);
    const std::string name = o.name;
    bool read_outside = o.is_graph_output;
    for (int c : o.consumers) read_outside = read_outside || !in_chain[static_cast<size_t>(c)];
    const ValueId b = g.add_value(pattern::fresh_name(g, name + "/blocked"));
    blocked.emplace(out, b);
    n.outputs[0] = b;
    n.notes.push_back(chain_note);
    if (read_outside) {
      copies.push_back(copy_node(kFromBlockedOp, name + "/from_blocked", b, out, 0,
                                 "copies '" + name + "' out of " + form + " form"));
    }
  }
  for (int i : members) g.mutable_node(i) = std::move(cand[static_cast<size_t>(i)].blocked);
  for (Node& c : copies) g.add_node(std::move(c));
}

}  // namespace

Status block_conv_chains(Graph& graph, int64_t block, const NodeFusionFilter& accept, bool* changed,
                         const ChainLayoutFilter& channels_last) {
  *changed = false;
  if (block < 1) return ok_status();
  const size_t count = graph.nodes().size();
  std::vector<Candidate> cand(count);
  for (int i : graph.topo_order()) {
    const Node& n = graph.node(i);
    Candidate& c = cand[static_cast<size_t>(i)];
    if (n.inputs.empty() || n.inputs[0] == kNoValue) continue;
    bool head = false;
    if (std::optional<Node> b = blocked_conv(graph, n, block, &head)) {
      c = {head ? Role::kHead : Role::kConv, std::move(*b)};
    } else if (std::optional<Node> p = blocked_pool(graph, n, block)) {
      c = {Role::kPool, std::move(*p)};
    } else if (elementwise(graph, n, block)) {
      c = {Role::kElementwise, n};
    } else if (binary(graph, n, block)) {
      c = {Role::kBinary, n};
    }
    if (c.role != Role::kNone && !accept(n, c.blocked, graph)) c.role = Role::kNone;
  }
  // Chains: candidates joined through the values one writes and the next reads.
  std::vector<int> parent(count);
  std::iota(parent.begin(), parent.end(), 0);
  for (int i : graph.topo_order()) {
    const Role r = cand[static_cast<size_t>(i)].role;
    if (r == Role::kNone || r == Role::kHead) continue;  // a head reads plain X
    for (size_t k : data_inputs(graph, graph.node(i), r)) {
      const int p = graph.value(graph.node(i).inputs[k]).producer;
      if (p >= 0 && cand[static_cast<size_t>(p)].role != Role::kNone) {
        parent[static_cast<size_t>(find(parent, i))] = find(parent, p);
      }
    }
  }
  std::map<int, std::vector<int>> chains;  // ordered: the same graph for the same model
  for (int i : graph.topo_order()) {
    if (cand[static_cast<size_t>(i)].role != Role::kNone) chains[find(parent, i)].push_back(i);
  }
  for (auto& [root, members] : chains) {
    if (!chain_pays(graph, members, cand)) continue;
    std::vector<const Node*> plain;
    for (int i : members) plain.push_back(&graph.node(i));
    rewrite_chain(graph, members, cand, block, channels_last && channels_last(plain, graph));
    *changed = true;
  }
  return *changed ? graph.finalize() : ok_status();
}

}  // namespace recur
