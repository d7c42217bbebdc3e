// Batch-first RNNs in layout 1. PyTorch's batch_first=True (and every exporter before opset 14,
// which had no layout attribute) writes an RNN over [N, T, I] as a layout-0 node between
// transposes:
//
//   X  = Transpose(x, perm 1,0,2)                                  [N,T,I] -> [T,N,I]
//   Y [T,D,N,H] -> Squeeze(axes 1)                  (one direction)
//               -> Transpose(0,2,1,3), Reshape(0,0,-1)  (two)       -> [T,N,D*H]
//               -> Transpose(perm 1,0,2)                           -> [N,T,D*H]
//
// Each transpose copies the whole sequence. In layout 1 (opset 14) the node reads [N,T,I] and
// writes Y [N,T,D,H] itself, through strided descriptors on oneDNN, so the three copies become
// one Reshape that copies nothing. Stacked batch-first layers chain through the glue between
// them (Y -> glue -> next X, no transposes there): both go to layout 1 and the glue becomes
// that Reshape too. initial_h/initial_c and Y_h/Y_c change layout with the node ([D,N,H] ->
// [N,D,H]): a Transpose of those small tensors is added where the model has them.
//
// A node folds when both ends do: its X comes from such a Transpose or from a folded layer's
// glue, and its Y is unread or goes through the glue to such a Transpose or to a folded layer.
// The set is the largest one for which that holds (found by dropping nodes until nothing
// changes).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/engine/optimize/optimizer.h"
#include "runtime/engine/optimize/pattern.h"
#include "runtime/engine/optimize/rnn_glue.h"

namespace recur {

namespace {

using pattern::fresh_name;
using rnn_glue::sole_reader;

enum class End : uint8_t { kNone, kTranspose, kLayer, kUnread };

struct Candidate {
  End in = End::kNone, out = End::kNone;
  int x_transpose = -1;         // in == kTranspose: the Transpose writing X
  std::vector<int64_t> x_perm;  // and the perm of [N, T, I] from its input (identity: none)
  int from = -1;                // in == kLayer: the RNN whose glue writes X
  rnn_glue::SeqGlue glue;
  int to = -1;           // out == kLayer: the RNN reading the glue's output
  int y_transpose = -1;  // out == kTranspose: the Transpose reading the glue's output
};

// Opset 7 on: the first opsets' LSTM and GRU have attributes that opset 14 does not.
bool eligible(const Graph& g, const Node& n) {
  if (!rnn_glue::is_rnn(n) || n.opset < 7 || !rnn_glue::layout0(n) || !n.has_input(kRnnX) ||
      !n.implicit_inputs.empty() || !RnnSpec::parse(n).ok())
    return false;
  return !n.has_output(kRnnY) || !g.value(n.outputs[kRnnY]).is_graph_output;
}

// The ends of node `n` as far as it alone tells: an X from a layer's glue is set from that
// layer's side (fold_rnn_layouts).
Candidate ends(const Graph& g, const Node& n) {
  Candidate c;
  const Value& x = g.value(n.inputs[kRnnX]);
  if (x.producer >= 0) {
    const Node& p = g.node(x.producer);
    const Attribute* perm = p.attr("perm");
    if (p.domain.empty() && p.op_type == "Transpose" && p.implicit_inputs.empty() && perm &&
        perm->type == AttrType::kInts && perm->ints.size() == 3 && p.outputs.size() == 1 &&
        p.has_input(0)) {
      // Layout 1 wants [N, T, I]: the same permutation with its first two axes swapped.
      c.in = End::kTranspose;
      c.x_transpose = p.index;
      c.x_perm = {perm->ints[1], perm->ints[0], perm->ints[2]};
    }
  }
  if (!n.has_output(kRnnY) || g.value(n.outputs[kRnnY]).consumers.empty()) {
    c.out = End::kUnread;
    return c;
  }
  auto glue = rnn_glue::seq_glue(g, n);
  if (!glue) return c;
  const Node* reader = sole_reader(g, glue->seq);
  if (!reader) return c;
  if (rnn_glue::is_transpose(*reader, {1, 0, 2})) {
    c.out = End::kTranspose;
    c.y_transpose = reader->index;
  } else if (rnn_glue::is_rnn(*reader) && reader->has_input(kRnnX) &&
             reader->inputs[kRnnX] == glue->seq) {
    c.out = End::kLayer;
    c.to = reader->index;
  } else {
    return c;
  }
  c.glue = std::move(*glue);
  return c;
}

// The largest set of candidates whose ends all fold: a layer end needs its partner in the set,
// and its partner's matching end pointing back.
void settle(std::map<int, Candidate>& cands) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = cands.begin(); it != cands.end();) {
      const Candidate& c = it->second;
      // Something must be saved: a Transpose of X, or the glue and Transpose after Y.
      const bool saves = c.in == End::kLayer || c.out == End::kTranspose || c.out == End::kLayer ||
                         c.x_perm == std::vector<int64_t>{0, 1, 2};
      bool ok = c.in != End::kNone && c.in != End::kUnread && c.out != End::kNone && saves;
      if (ok && c.in == End::kLayer) {
        auto p = cands.find(c.from);
        ok = p != cands.end() && p->second.out == End::kLayer && p->second.to == it->first;
      }
      if (ok && c.out == End::kLayer) {
        auto p = cands.find(c.to);
        ok = p != cands.end() && p->second.in == End::kLayer && p->second.from == it->first;
      }
      if (ok) {
        ++it;
      } else {
        it = cands.erase(it);
        changed = true;
      }
    }
  }
}

Node plain_node(const Graph& g, const std::string& name, const char* op, int opset,
                std::vector<ValueId> inputs, ValueId output) {
  Node n;
  n.name = fresh_name(g, name);
  n.op_type = op;
  n.opset = opset;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  return n;
}

Node transpose_102(const Graph& g, const std::string& name, ValueId in, ValueId out, int opset) {
  Node n = plain_node(g, name, "Transpose", opset, {in}, out);
  Attribute perm;
  perm.type = AttrType::kInts;
  perm.ints = {1, 0, 2};
  n.attributes.emplace("perm", std::move(perm));
  return n;
}

// The converted node: layout 1, at opset 14 at least (the attribute's first opset; the
// operators are otherwise the same since opset 7).
Node converted(const Node& n) {
  Node c = n;
  Attribute layout;
  layout.type = AttrType::kInt;
  layout.i = 1;
  c.attributes["layout"] = layout;
  c.opset = std::max(c.opset, 14);
  return c;
}

// Rewrites candidate `c` at node `idx`; new nodes go to `added`, removed ones into `dead`.
void rewrite(Graph& g, int idx, const Candidate& c, std::vector<Node>& added,
             std::vector<bool>& dead) {
  Node n = converted(g.node(idx));
  const std::string& base = n.name;
  std::vector<std::string> removed;
  auto remove = [&](int i) {
    dead[static_cast<size_t>(i)] = true;
    removed.push_back("'" + g.node(i).name + "'");
  };
  // Y changes layout (shape inference runs again after the pass).
  if (n.has_output(kRnnY)) g.mutable_value(n.outputs[kRnnY]).type.shape.reset();
  if (c.in == End::kTranspose) {
    const Node& t = g.node(c.x_transpose);
    const bool only_reader =
        g.value(t.outputs[0]).consumers.size() == 1 && !g.value(t.outputs[0]).is_graph_output;
    if (c.x_perm == std::vector<int64_t>{0, 1, 2}) {
      n.inputs[kRnnX] = t.inputs[0];
      if (only_reader) remove(c.x_transpose);  // other readers keep the transposed X
    } else if (only_reader) {
      g.mutable_node(c.x_transpose).attributes["perm"].ints = c.x_perm;
      g.mutable_value(t.outputs[0]).type.shape.reset();
    } else {
      const ValueId v = g.add_value(fresh_name(g, base + "/layout1_x"));
      Node tn = transpose_102(g, base + "/layout1_x", t.inputs[0], v, n.opset);
      tn.attributes["perm"].ints = c.x_perm;
      added.push_back(std::move(tn));
      n.inputs[kRnnX] = v;
    }
  }
  if (c.out == End::kTranspose || c.out == End::kLayer) {
    for (int i : c.glue.nodes) remove(i);
    ValueId seq = c.glue.seq;
    if (c.out == End::kTranspose) {
      seq = g.node(c.y_transpose).outputs[0];
      remove(c.y_transpose);
    }
    // Shape inference runs again after the pass: a chain's sequence changes layout.
    if (c.out == End::kLayer) g.mutable_value(seq).type.shape.reset();
    const ValueId shape = g.add_value(fresh_name(g, base + "/layout1_seq_shape"));
    g.set_initializer(shape, Tensor::from_vector<int64_t>({3}, {0, 0, -1}));
    added.push_back(
        plain_node(g, base + "/layout1_seq", "Reshape", 14, {n.outputs[kRnnY], shape}, seq));
  }
  // States: [D, N, H] in layout 0, [N, D, H] in layout 1.
  for (size_t i : {size_t{kRnnInitialH}, size_t{kRnnInitialC}}) {
    if (!n.has_input(i)) continue;
    const ValueId v = g.add_value(fresh_name(g, g.value(n.inputs[i]).name + "/layout1"));
    added.push_back(transpose_102(g, base + "/layout1_state_in", n.inputs[i], v, n.opset));
    n.inputs[i] = v;
  }
  for (size_t i : {size_t{kRnnYh}, size_t{kRnnYc}}) {
    if (!n.has_output(i)) continue;
    if (g.value(n.outputs[i]).consumers.empty() && !g.value(n.outputs[i]).is_graph_output) {
      n.outputs[i] = kNoValue;
      continue;
    }
    const ValueId v = g.add_value(fresh_name(g, g.value(n.outputs[i]).name + "/layout1"));
    added.push_back(transpose_102(g, base + "/layout1_state_out", v, n.outputs[i], n.opset));
    n.outputs[i] = v;
  }
  std::string names;
  for (const std::string& r : removed) names += (names.empty() ? "" : ", ") + r;
  n.notes.push_back(
      "batch-first: runs in layout 1, reading X [N,T,I] and writing Y [N,T,D,H] "
      "itself" +
      (names.empty() ? std::string() : "; removed " + names));
  g.mutable_node(idx) = std::move(n);
}

}  // namespace

Status fold_rnn_layouts(Graph& graph, const NodeFusionFilter& accept, bool* folded) {
  *folded = false;
  std::map<int, Candidate> cands;
  for (const Node& n : graph.nodes()) {
    if (!eligible(graph, n)) continue;
    if (accept && !accept(n, converted(n), graph)) continue;
    cands.emplace(n.index, ends(graph, n));
  }
  for (auto& [idx, c] : cands) {
    if (c.out != End::kLayer) continue;
    if (auto to = cands.find(c.to); to != cands.end()) {
      to->second.in = End::kLayer;
      to->second.from = idx;
    }
  }
  settle(cands);
  if (cands.empty()) return ok_status();
  *folded = true;
  std::vector<bool> dead(graph.nodes().size(), false);
  std::vector<Node> added;
  std::set<std::string> x_transposes;
  for (const auto& [idx, c] : cands) {
    if (c.in == End::kTranspose) x_transposes.insert(graph.node(c.x_transpose).name);
    rewrite(graph, idx, c, added, dead);
  }
  for (Node& n : added) graph.add_node(std::move(n));
  dead.resize(graph.nodes().size(), false);
  graph.remove_nodes(dead);
  RECUR_RETURN_IF_ERROR(graph.finalize());
  // A Transpose of X that several folded nodes read directly is read by none of them now.
  std::vector<bool> unread(graph.nodes().size(), false);
  bool any = false;
  for (const Node& n : graph.nodes()) {
    if (n.domain.empty() && n.op_type == "Transpose" && n.outputs.size() == 1 &&
        n.outputs[0] != kNoValue && graph.value(n.outputs[0]).consumers.empty() &&
        !graph.value(n.outputs[0]).is_graph_output && x_transposes.count(n.name)) {
      unread[static_cast<size_t>(n.index)] = any = true;
    }
  }
  if (!any) return ok_status();
  graph.remove_nodes(unread);
  return graph.finalize();
}

}  // namespace recur
