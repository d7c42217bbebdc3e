// ONNX Runtime's NCHWc layout (domain com.microsoft.nchwc), which its optimizer writes into the
// models it saves at level 'all' (its default level) on a CPU with AVX2: convolutions, pools
// and resizes on tensors whose channels are split into blocks of 8 (AVX2) or 16 (AVX-512), the
// blocks innermost, with the channel count padded to a whole block, and the weights reordered
// to match. recur lowers that region to ONNX operators on plain NCHW tensors holding the same
// padded channels: each weight is put back in ONNX's order at load (the padding channels' zero
// weights with it), so the padding channels carry what they would in ONNX Runtime, and
// ReorderOutput drops them. The plain operators ONNX Runtime leaves on blocked tensors
// (activations, same-shape Add/Sum/Mul, Concat of whole blocks) compute the same in either
// layout, and so do the Reshapes it writes around an Add to split the channels into blocks
// (they become Identity); any other use of a blocked tensor is refused, naming the node.
// docs/semantics.md, "ONNX Runtime's NCHWc layout".
#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "recur/dtype.h"
#include "runtime/engine/optimize/lowering.h"

namespace recur::lowering {

namespace {

// The block of ONNX Runtime's kernels on this CPU: the block a model saved here holds where
// the model itself does not say (ONNX Runtime itself reads the model with its CPU's block).
int64_t machine_block() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f") ? 16 : 8;
#else
  return 16;
#endif
}

int64_t round_up(int64_t v, int64_t b) { return (v + b - 1) / b * b; }

// A constant int64 vector (a Reshape's shape), or empty.
std::vector<int64_t> int64_constant(const Graph& g, ValueId v) {
  const Tensor* t = v == kNoValue ? nullptr : g.constant(v);
  if (!t || t->dtype() != DType::kInt64 || t->shape().size() != 1) return {};
  const int64_t* p = t->data<int64_t>();
  return std::vector<int64_t>(p, p + t->numel());
}

// The Reshapes around an Add of blocked tensors: [0, C/b or -1, 0, 0, b] splits the channels,
// [0, C or -1, 0, 0] joins them again.
bool is_split_shape(const std::vector<int64_t>& s) {
  return s.size() == 5 && s[0] == 0 && s[1] != 0 && s[2] == 0 && s[3] == 0 && s[4] > 0;
}
bool is_join_shape(const std::vector<int64_t>& s) {
  return s.size() == 4 && s[0] == 0 && s[1] != 0 && s[2] == 0 && s[3] == 0;
}

void for_each_graph(Graph& g, const std::function<void(Graph&)>& f) {
  f(g);
  for (const Node& n : g.nodes()) {
    for (const auto& [name, a] : n.attributes) {
      if (a.g) for_each_graph(*a.g, f);
      for (const auto& sub : a.graphs) for_each_graph(*sub, f);
    }
  }
}

// What the model says of its block: the last dimension of a splitting Reshape (explicit), and
// whether some padded channel count is a multiple of 8 but not of 16.
struct BlockEvidence {
  int64_t stated = 0;
  bool eight = false;
  bool any = false;
  std::string conflict;
};

void gather_evidence(const Graph& g, BlockEvidence& e) {
  for (const Node& n : g.nodes()) {
    if (n.domain == kNchwc) {
      e.any = true;
      if (n.op_type != "Conv" || !n.has_input(1)) continue;
      const Tensor* w = g.constant(n.inputs[1]);
      if (w && w->shape().size() == 4 && w->shape()[0] % 16 != 0) e.eight = true;
    } else if (n.op_type == "Reshape" && n.domain.empty() && n.has_input(1)) {
      const std::vector<int64_t> s = int64_constant(g, n.inputs[1]);
      if (!is_split_shape(s)) continue;
      if (e.stated != 0 && e.stated != s[4]) {
        e.conflict = n.describe() + " splits channels into blocks of " + std::to_string(s[4]) +
                     ", another Reshape into blocks of " + std::to_string(e.stated);
      }
      e.stated = s[4];
    }
  }
}

// ---- Which values hold blocked tensors, and whether each use of one reads it correctly ----

enum class Form : uint8_t { kPlain, kBlocked, kSplit };

bool is_elementwise(const std::string& op) {
  static const char* const kOps[] = {"Abs",         "Add",
                                     "Celu",        "Ceil",
                                     "Clip",        "Cos",
                                     "Div",         "Elu",
                                     "Erf",         "Exp",
                                     "Floor",       "Gelu",
                                     "HardSigmoid", "HardSwish",
                                     "Identity",    "LeakyRelu",
                                     "Log",         "Max",
                                     "Mean",        "Min",
                                     "Mish",        "Mul",
                                     "Neg",         "Pow",
                                     "Reciprocal",  "Relu",
                                     "Round",       "Selu",
                                     "Sigmoid",     "Sin",
                                     "Softplus",    "Softsign",
                                     "Sqrt",        "Sub",
                                     "Sum",         "Swish",
                                     "Tanh",        "ThresholdedRelu"};
  return std::find_if(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; }) !=
         std::end(kOps);
}

class Checker {
 public:
  Checker(Graph& g, int64_t block) : g_(g), block_(block), form_(g.num_values(), Form::kPlain) {}

  // In topological order every reader of a blocked value comes after it, so the first node
  // that reads one wrongly (or, through a subgraph, at all) is the one named.
  Status run() {
    for (int i : g_.topo_order()) {
      const Node& n = g_.node(i);
      if (const ValueId v = implicit_read(n, i); v != kNoValue) return unreadable(n, v);
      if (check(n, i)) continue;
      for (ValueId v : n.inputs)
        if (form(v) != Form::kPlain) return unreadable(n, v);
      if (n.domain == kNchwc) {
        return invalid_model(n.describe() +
                             " reads its operands in layouts ONNX Runtime does not give them "
                             "(an NCHWc operator's input must come from ReorderInput or another "
                             "NCHWc operator; a Conv of fewer input channels than a block "
                             "reads NCHW)");
      }
    }
    for (ValueId v : g_.outputs()) {
      if (form_[static_cast<size_t>(v)] != Form::kPlain) {
        return invalid_model("graph output '" + g_.value(v).name +
                             "' is a tensor in ONNX Runtime's NCHWc layout");
      }
    }
    return ok_status();
  }

  // A blocked value a subgraph of `n` reads from this graph, or kNoValue.
  ValueId implicit_read(const Node& n, int index) const {
    bool subgraphs = false;
    for (const auto& [name, a] : n.attributes) subgraphs = subgraphs || a.g || !a.graphs.empty();
    if (!subgraphs) return kNoValue;
    for (size_t v = 0; v < form_.size(); ++v) {
      if (form_[v] == Form::kPlain) continue;
      const auto id = static_cast<ValueId>(v);
      const std::vector<int>& users = g_.value(id).consumers;
      if (std::find(users.begin(), users.end(), index) != users.end() &&
          std::find(n.inputs.begin(), n.inputs.end(), id) == n.inputs.end()) {
        return id;
      }
    }
    return kNoValue;
  }

  Status unreadable(const Node& n, ValueId v) const {
    return invalid_model(n.describe() + " reads '" + g_.value(v).name +
                         "', a tensor in ONNX Runtime's NCHWc layout, in a way recur cannot map "
                         "to ONNX's layout");
  }

  bool blocked(ValueId v) const { return form(v) != Form::kPlain; }
  int64_t block() const { return block_; }

  // The Reshapes to rewrite, splitting (true) or joining the channels.
  const std::vector<std::pair<int, bool>>& reshapes() const { return reshapes_; }
  // The values between them, which have the plain tensor's shape once they are rewritten, not
  // the five dimensions the model may declare.
  void forget_split_shapes() {
    for (size_t v = 0; v < form_.size(); ++v)
      if (form_[v] == Form::kSplit) g_.mutable_value(static_cast<ValueId>(v)).type.shape.reset();
  }

 private:
  Form form(ValueId v) const {
    return v == kNoValue ? Form::kPlain : form_[static_cast<size_t>(v)];
  }
  void set_outputs(const Node& n, Form f) {
    for (ValueId v : n.outputs)
      if (v != kNoValue) form_[static_cast<size_t>(v)] = f;
  }
  bool scalar_constant(ValueId v) const {
    const Tensor* t = g_.constant(v);
    return t && t->numel() == 1;
  }

  // Whether `n` reads its blocked inputs (if any) correctly; sets its outputs' forms.
  bool check(const Node& n, int index) {
    if (n.domain == kNchwc) return check_nchwc(n);
    Form in = Form::kPlain;
    for (ValueId v : n.inputs) {
      if (form(v) == Form::kPlain) continue;
      if (in != Form::kPlain && in != form(v)) return false;
      in = form(v);
    }
    if (in == Form::kPlain) return true;
    if (is_elementwise(n.op_type) && n.domain.empty()) {
      // Every other operand a scalar constant (Clip's bounds, a Mul's factor).
      for (ValueId v : n.inputs)
        if (v != kNoValue && form(v) == Form::kPlain && !scalar_constant(v)) return false;
      set_outputs(n, in);
      return true;
    }
    if (n.op_type == "Concat" && n.domain.empty() && in == Form::kBlocked) {
      const Attribute* axis = n.attr("axis");
      if (!axis || (axis->i != 1 && axis->i != -3)) return false;
      for (ValueId v : n.inputs) {
        if (form(v) != Form::kBlocked) return false;
        // Whole blocks only: padding channels would land inside the result.
        const auto& shape = g_.value(v).type.shape;
        if (shape && shape->size() == 4 && (*shape)[1].value > 0 &&
            (*shape)[1].value % block_ != 0) {
          return false;
        }
      }
      set_outputs(n, Form::kBlocked);
      return true;
    }
    if (n.op_type == "Reshape" && n.domain.empty() && n.has_input(1) &&
        form(n.inputs[1]) == Form::kPlain) {
      const Attribute* allowzero = n.attr("allowzero");
      if (allowzero && allowzero->i != 0) return false;
      const std::vector<int64_t> s = int64_constant(g_, n.inputs[1]);
      if (in == Form::kBlocked && is_split_shape(s) && s[4] == block_) {
        reshapes_.push_back({index, true});
        set_outputs(n, Form::kSplit);
        return true;
      }
      if (in == Form::kSplit && is_join_shape(s)) {
        reshapes_.push_back({index, false});
        set_outputs(n, Form::kBlocked);
        return true;
      }
    }
    return false;
  }

  bool check_nchwc(const Node& n) {
    if (n.op_type == "ReorderInput") {
      set_outputs(n, Form::kBlocked);
      return n.inputs.empty() || form(n.inputs[0]) == Form::kPlain;
    }
    if (n.op_type == "ReorderOutput") {
      set_outputs(n, Form::kPlain);
      return !n.inputs.empty() && form(n.inputs[0]) == Form::kBlocked;
    }
    set_outputs(n, Form::kBlocked);
    if (n.inputs.empty()) return true;  // the lowering reports the missing input
    Form x = Form::kBlocked;
    if (n.op_type == "Conv" && reads_plain_input(n)) x = Form::kPlain;
    if (form(n.inputs[0]) != x) return false;
    // Conv's Sum operand is blocked; the weights and bias are constants.
    if (n.op_type == "Conv" && n.has_input(3) && form(n.inputs[3]) != Form::kBlocked) return false;
    for (size_t i = 1; i < std::min<size_t>(n.inputs.size(), 3); ++i)
      if (form(n.inputs[i]) != Form::kPlain) return false;
    return true;
  }

  // ONNX Runtime reads the NCHW input itself for a convolution of fewer input channels than a
  // block (its filter then has the output channels blocked only).
  bool reads_plain_input(const Node& n) const {
    if (!n.has_input(1)) return false;
    const Tensor* w = g_.constant(n.inputs[1]);
    const Attribute* group = n.attr("group");
    return w && w->shape().size() == 4 && (!group || group->i == 1) && w->shape()[1] < block_;
  }

  Graph& g_;
  int64_t block_;
  std::vector<Form> form_;
  std::vector<std::pair<int, bool>> reshapes_;
};

// ONNX Runtime's Reshape [0, C/b, 0, 0, b] reads the blocked memory as N x C/b x H x W x b,
// and only elementwise operations (whose other operands are splits of tensors of the same
// channel count, or scalars) come between it and the Reshape back (the checks above ensure
// it). Element (n, c/b, h, w, c%b) of such a view is element (n, c, h, w) of the plain tensor,
// and broadcasting over N, H or W pairs the same elements in either form, so on the plain
// tensors the two Reshapes are no-ops.
void rewrite_reshape(Graph& g, int index, bool split, int64_t block) {
  Lowering l(g, index, true);
  const DType t = l.dtype(l.in(0)) == DType::kUndefined ? DType::kFloat32 : l.dtype(l.in(0));
  l.add("Identity", 16, {l.in(0)}, {l.out(0)});
  l.commit(split ? "the channels split into blocks of " + std::to_string(block) +
                       ", which the plain tensor needs no Reshape for"
                 : "the blocks joined back into channels",
           t);
}

// The first `rows` output and `cols` input channels of a filter, in ONNX's [O, I, kH, kW]
// order, from ONNX Runtime's: output channels in blocks of b (innermost), and with
// `blocked_inputs` the input channels in blocks of b too, next to them.
Tensor unblock(const Tensor& w, int64_t b, int64_t rows, int64_t cols, bool blocked_inputs) {
  const Shape& s = w.shape();
  const int64_t I = s[1], K = s[2] * s[3];
  Tensor out = Tensor::empty(DType::kFloat32, {rows, cols, s[2], s[3]});
  const float* src = w.data<float>();
  float* dst = out.data<float>();
  const int64_t bi = blocked_inputs ? b : 1;
  for (int64_t o = 0; o < rows; ++o) {
    const int64_t ob = o / b, oo = o % b;
    for (int64_t i = 0; i < cols; ++i) {
      const int64_t ib = i / bi, ii = i % bi;
      for (int64_t k = 0; k < K; ++k) {
        // Blocked order: [O/b][I/bi][K][bi][b].
        const int64_t at = (((ob * (I / bi) + ib) * K + k) * bi + ii) * b + oo;
        dst[(o * cols + i) * K + k] = src[at];
      }
    }
  }
  return out;
}

// Which blocked tensors can be held with their logical channels only. ONNX Runtime pads a
// blocked tensor's channels to a whole block, and computes on the padding (a 20-channel
// convolution runs as 32): its padding channels hold values nothing reads, since a blocked
// filter's weights on them are zero, ReorderOutput drops them and the other operators work
// channel by channel. Where the model says how many channels a tensor has (ReorderInput's
// input, ReorderOutput's `channels`), the tensors tied to it channel for channel (through
// elementwise operators, pools, resizes, depthwise convolutions, a Conv's Sum) are held
// without the padding: each convolution producing one computes its logical channels only, each
// reading one drops the filter's zero columns. A group whose counts disagree, that a Concat
// touches, or whose dropped columns are not all zero keeps the padding.
class Unpadder {
 public:
  Unpadder(const Graph& g, const Checker& c)
      : g_(g), c_(c), parent_(g.num_values()), known_(g.num_values(), 0) {
    for (size_t v = 0; v < parent_.size(); ++v) parent_[v] = static_cast<ValueId>(v);
  }

  std::unordered_map<ValueId, int64_t> run() {
    std::vector<int> readers;  // Convs reading a blocked tensor through a full filter
    for (int i : g_.topo_order()) {
      const Node& n = g_.node(i);
      if (n.domain == kNchwc) {
        visit_nchwc(n, i, readers);
        continue;
      }
      std::vector<ValueId> tied;
      for (ValueId v : n.inputs)
        if (v != kNoValue && c_.blocked(v)) tied.push_back(v);
      if (tied.empty()) continue;
      for (ValueId v : n.outputs)
        if (v != kNoValue) tied.push_back(v);
      // Concat's operands are whole blocks: nothing to drop, and offsets that must not move.
      for (size_t k = 1; k < tied.size(); ++k) unite(tied[0], tied[k]);
      if (n.op_type == "Concat") poison(tied[0]);
    }
    for (int i : readers) check_dropped_columns(g_.node(i));
    std::unordered_map<ValueId, int64_t> out;
    for (size_t v = 0; v < parent_.size(); ++v) {
      const auto id = static_cast<ValueId>(v);
      if (!c_.blocked(id)) continue;
      const int64_t k = known_[static_cast<size_t>(find(id))];
      if (k > 0) out[id] = k;
    }
    return out;
  }

 private:
  ValueId find(ValueId v) {
    while (parent_[static_cast<size_t>(v)] != v) {
      parent_[static_cast<size_t>(v)] =
          parent_[static_cast<size_t>(parent_[static_cast<size_t>(v)])];
      v = parent_[static_cast<size_t>(v)];
    }
    return v;
  }
  static int64_t merged(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (a == 0 || b == 0) return a + b;
    return a == b ? a : -1;
  }
  void unite(ValueId a, ValueId b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    known_[static_cast<size_t>(a)] =
        merged(known_[static_cast<size_t>(a)], known_[static_cast<size_t>(b)]);
    parent_[static_cast<size_t>(b)] = a;
  }
  void know(ValueId v, int64_t channels) {
    int64_t& k = known_[static_cast<size_t>(find(v))];
    k = merged(k, channels > 0 ? channels : -1);
  }
  void poison(ValueId v) { known_[static_cast<size_t>(find(v))] = -1; }

  const Tensor* filter(const Node& n) const {
    const Tensor* w = n.has_input(1) ? g_.constant(n.inputs[1]) : nullptr;
    return w && w->dtype() == DType::kFloat32 && w->shape().size() == 4 ? w : nullptr;
  }

  void visit_nchwc(const Node& n, int index, std::vector<int>& readers) {
    if (n.inputs.empty() || n.outputs.empty() || n.outputs[0] == kNoValue) return;
    const ValueId x = n.inputs[0], y = n.outputs[0];
    if (n.op_type == "ReorderInput") {
      const Attribute* last = n.attr("channels_last");
      const int64_t c = plain_channels(x, last && last->i != 0);
      if (c > 0) know(y, c);  // else unknown: the tensor keeps its padding
    } else if (n.op_type == "ReorderOutput") {
      const Attribute* channels = n.attr("channels");
      know(x, channels ? channels->i : -1);
    } else if (n.op_type == "Conv") {
      const Tensor* w = filter(n);
      if (!w) return poison(y);  // the lowering refuses it
      const Attribute* group = n.attr("group");
      const bool depthwise = group && group->i > 1 && w->shape()[1] == 1;
      if (n.has_input(3)) unite(n.inputs[3], y);
      if (depthwise) {
        unite(x, y);
      } else if (group && group->i > 1) {
        // A grouped filter's groups are whole blocks: dropping channels would shift them.
        poison(x);
        poison(y);
      } else if (c_.blocked(x)) {
        readers.push_back(index);
      }
    } else {
      unite(x, y);  // pools and Upsample, channel by channel
    }
  }

  // The channels of the plain tensor x: its shape's, or, where shape inference could not see
  // through ONNX Runtime's operators yet, the `channels` of the ReorderOutput it comes from
  // through elementwise operators (Clip between two blocked regions).
  int64_t plain_channels(ValueId x, bool nhwc) const {
    for (int hops = 0; hops < 64 && x != kNoValue; ++hops) {
      const auto& shape = g_.value(x).type.shape;
      if (shape && shape->size() == 4) return (*shape)[nhwc ? 3 : 1].value;
      const int p = g_.value(x).producer;
      if (p < 0) return -1;
      const Node& n = g_.node(p);
      if (n.domain == kNchwc && n.op_type == "ReorderOutput") {
        const Attribute* last = n.attr("channels_last");
        const Attribute* channels = n.attr("channels");
        if ((last && last->i != 0) != nhwc || !channels) return -1;
        return channels->i;
      }
      if (!n.domain.empty() || !is_elementwise(n.op_type) || n.inputs.empty()) return -1;
      // The one operand that is not a scalar constant.
      ValueId next = kNoValue;
      for (ValueId v : n.inputs) {
        if (v == kNoValue) continue;
        const Tensor* t = g_.constant(v);
        if (t && t->numel() == 1) continue;
        if (next != kNoValue) return -1;
        next = v;
      }
      x = next;
    }
    return -1;
  }

  // A filter may drop the columns of a tensor's padding only where they are zero.
  void check_dropped_columns(const Node& n) {
    const int64_t k = known_[static_cast<size_t>(find(n.inputs[0]))];
    if (k <= 0) return;
    const Tensor* w = filter(n);
    const Shape& s = w->shape();
    if (k > s[1]) return poison(n.inputs[0]);
    const int64_t b = blocked_filter_block(s);
    if (b <= 0) return poison(n.inputs[0]);
    const Tensor plain = unblock(*w, b, s[0], s[1], true);
    const float* p = plain.data<float>();
    const int64_t K = s[2] * s[3];
    for (int64_t o = 0; o < s[0]; ++o)
      for (int64_t i = k; i < s[1]; ++i)
        for (int64_t j = 0; j < K; ++j)
          if (p[(o * s[1] + i) * K + j] != 0.0f) return poison(n.inputs[0]);
  }
  int64_t blocked_filter_block(const Shape& s) const {
    return s[0] % block() == 0 && s[1] % block() == 0 ? block() : 0;
  }
  int64_t block() const { return c_.block(); }

  const Graph& g_;
  const Checker& c_;
  std::vector<ValueId> parent_;
  std::vector<int64_t> known_;  // per root: 0 unknown, -1 keep the padding, else the channels
};

// ---- The operators ----

Status lower_conv(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(2));
  const Node& n = l.original();
  const int64_t b = l.nchwc_block();
  AttrReader a(n);
  const int64_t group = a.get_int("group", 1);
  RECUR_RETURN_IF_ERROR(a.status());
  const Tensor* w = l.is_constant(l.in(1)) ? l.graph().constant(l.in(1)) : nullptr;
  if (!w || w->dtype() != DType::kFloat32 || w->shape().size() != 4) {
    return l.error(
        "its filter must be a constant float32 tensor of rank 4 (ONNX Runtime "
        "reorders it into its blocked layout when it saves the model)");
  }
  const Shape& ws = w->shape();
  const int64_t O = ws[0], I = ws[1];
  const bool depthwise = group > 1 && I == 1;
  const bool plain_input = group == 1 && I < b;
  // A depthwise group is the padded channel count (ONNX Runtime 1.30) or the true one.
  if (O <= 0 || O % b != 0 || (depthwise && round_up(group, b) != O) ||
      (!depthwise && !plain_input && I % b != 0) ||
      (group > 1 && !depthwise && (O % group != 0 || (O / group) % b != 0))) {
    return l.error("its filter of shape " + shape_to_string(ws) + " (group " +
                   std::to_string(group) + ") is not in whole blocks of " + std::to_string(b) +
                   " channels");
  }
  // The output's logical channels where it is held without its padding (Unpadder), and the
  // input's likewise for a blocked filter (a depthwise one ties the two).
  const bool blocked_input = !depthwise && !plain_input;
  const int64_t out_c = l.nchwc_channels(l.out(0));
  const int64_t in_c = blocked_input ? l.nchwc_channels(l.in(0)) : -1;
  const int64_t rows = out_c > 0 ? out_c : O;
  const int64_t cols = in_c > 0 ? in_c : I;
  if (rows > O || cols > I) {
    return l.error("its filter of shape " + shape_to_string(ws) + " is smaller than the " +
                   std::to_string(rows) + " output and " + std::to_string(cols) +
                   " input channels of its tensors");
  }
  const ValueId filter = l.constant("filter", unblock(*w, b, rows, cols, blocked_input));
  ValueId bias = l.in(2);
  if (const Tensor* bt = l.is_constant(bias) ? l.graph().constant(bias) : nullptr) {
    if (bt->dtype() != DType::kFloat32 || bt->shape().size() != 1 || bt->numel() > O) {
      return l.error("its bias must be float32 of at most " + std::to_string(O) + " values");
    }
    if (bt->numel() != rows) {
      // The bias of the channels computed: ONNX Runtime pads it with the filter (an older
      // writer may not have), and the padding channels may not be computed at all.
      std::vector<float> cut(static_cast<size_t>(rows), 0.0f);
      std::copy_n(bt->data<float>(), std::min(bt->numel(), rows), cut.begin());
      bias = l.constant("bias", Tensor::from_vector<float>({rows}, cut));
    }
  }
  const DType t = DType::kFloat32;
  const Attribute* act_attr = n.attr("activation");
  const bool act = act_attr && !act_attr->s.empty();
  const bool sum = l.in(3) != kNoValue;
  const ValueId conv_y = (sum || act) ? l.temp("conv", t) : l.out(0);
  Node& conv = l.add("Conv", 11, {l.in(0), filter, bias}, {conv_y});
  copy_attrs(n, conv, {"auto_pad", "dilations", "kernel_shape", "pads", "strides"});
  // A depthwise convolution's group is its channel count.
  set_int(conv, "group", depthwise ? rows : group);
  l.keep_name();
  ValueId pre = conv_y;
  if (sum) pre = l.binary("Add", conv_y, l.in(3), act ? kNoValue : l.out(0), t);
  if (act) RECUR_RETURN_IF_ERROR(lower_conv_activation(l, pre, l.out(0), t));
  l.commit(
      std::string(depthwise     ? "depthwise"
                  : plain_input ? "NCHW input"
                                : "blocked input") +
          ", blocks of " + std::to_string(b) + " channels" +
          (rows < O ? ", " + std::to_string(rows) + " of " + std::to_string(O) + " computed" : ""),
      t);
  return ok_status();
}

Status lower_reorder_input(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  AttrReader a(l.original());
  const bool last = a.get_int("channels_last", 0) != 0;
  RECUR_RETURN_IF_ERROR(a.status());
  const ValueId x = l.in(0);
  const DType t = l.dtype(x);
  if (l.rank(x) != 4) {
    if (l.rank(x) < 0) return l.needs_shapes("the rank of its input is not known");
    return l.error("its input has rank " + std::to_string(l.rank(x)) + "; it takes rank 4");
  }
  const int64_t c = l.dim(x, last ? 3 : 1);
  if (c < 0) return l.needs_shapes("its input's channel count is not known at load");
  // Held without the padding (Unpadder), or padded to a whole block as ONNX Runtime does.
  const int64_t padded = l.nchwc_channels(l.out(0)) == c ? c : round_up(c, l.nchwc_block());
  ValueId cur = x;
  if (last) {
    cur = padded != c ? l.temp("nchw", t) : l.out(0);
    set_ints(l.add("Transpose", 13, {x}, {cur}), "perm", {0, 3, 1, 2});
  }
  if (padded != c) {
    const ValueId pads = l.int64s("pads", {0, 0, 0, 0, 0, padded - c, 0, 0});
    l.add("Pad", 13, {cur, pads}, {l.out(0)});
  } else if (!last) {
    l.add("Identity", 16, {x}, {l.out(0)});
  }
  l.commit(std::string(last ? "NHWC" : "NCHW") + " input, " + std::to_string(c) + " channels" +
               (padded != c ? " padded to " + std::to_string(padded) : ""),
           t);
  return ok_status();
}

Status lower_reorder_output(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  AttrReader a(l.original());
  const int64_t channels = a.get_int("channels", 0);
  const bool last = a.get_int("channels_last", 0) != 0;
  RECUR_RETURN_IF_ERROR(a.status());
  if (channels <= 0) return l.error("its channels attribute must be positive");
  const ValueId x = l.in(0);
  const DType t = l.dtype(x);
  const int64_t have = l.dim(x, 1);
  if (have < 0 && !l.last_round()) return l.needs_shapes("its input's channel count is not known");
  if (have >= 0 && have < channels) {
    return l.error("its input has " + std::to_string(have) + " channels, fewer than its " +
                   std::to_string(channels));
  }
  ValueId cur = x;
  if (have != channels) {
    cur = last ? l.temp("channels", t) : l.out(0);
    l.add("Slice", 13,
          {x, l.int64s("starts", {0}), l.int64s("ends", {channels}), l.int64s("axes", {1})}, {cur});
  }
  if (last) {
    set_ints(l.add("Transpose", 13, {cur}, {l.out(0)}), "perm", {0, 2, 3, 1});
  } else if (cur == x) {
    l.add("Identity", 16, {x}, {l.out(0)});
  }
  l.commit(std::to_string(channels) + " channels" + (last ? ", NHWC" : ""), t);
  return ok_status();
}

Status lower_upsample(Lowering& l) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  AttrReader a(l.original());
  const std::vector<int64_t> scales = a.get_ints("scales");
  const std::string mode = a.get_string("mode", "nearest");
  const std::string ctm = a.get_string("coordinate_transformation_mode", "asymmetric");
  RECUR_RETURN_IF_ERROR(a.status());
  if (scales.size() != 4 || scales[0] != 1 || scales[1] != 1 || scales[2] <= 0 || scales[3] <= 0) {
    return l.error("its scales must be [1, 1, h, w] with h and w positive");
  }
  if (mode != "nearest" && mode != "linear") {
    return l.error("mode '" + mode + "': NCHWc Upsample takes nearest or linear");
  }
  std::vector<float> f(scales.begin(), scales.end());
  const ValueId s = l.constant("scales", Tensor::from_vector<float>({4}, f));
  Node& r = l.add("Resize", 13, {l.in(0), kNoValue, s}, {l.out(0)});
  set_string(r, "mode", mode);
  if (mode == "nearest") {
    // Each input pixel repeated scale times.
    set_string(r, "coordinate_transformation_mode", "asymmetric");
    set_string(r, "nearest_mode", "floor");
  } else {
    set_string(r, "coordinate_transformation_mode", ctm);
  }
  l.commit(mode + " x" + std::to_string(scales[2]) + "," + std::to_string(scales[3]),
           l.dtype(l.in(0)));
  return ok_status();
}

// The pools take ONNX's attributes as they are.
Status lower_pool(Lowering& l, const char* op, int opset,
                  std::initializer_list<const char*> attrs) {
  RECUR_RETURN_IF_ERROR(l.require_inputs(1));
  copy_attrs(l.original(), l.add(op, opset, {l.in(0)}, {l.out(0)}), attrs);
  l.commit("as ONNX's", l.dtype(l.in(0)));
  return ok_status();
}

}  // namespace

Result<NchwcPlan> prepare_nchwc(Graph& graph) {
  BlockEvidence e;
  for_each_graph(graph, [&](Graph& g) { gather_evidence(g, e); });
  NchwcPlan plan;
  if (!e.any) return plan;
  if (!e.conflict.empty()) return invalid_model(e.conflict);
  if (e.stated != 0 && e.stated != 8 && e.stated != 16) {
    return invalid_model(
        "a Reshape around ONNX Runtime's NCHWc tensors splits channels into "
        "blocks of " +
        std::to_string(e.stated) + "; its blocks are 8 or 16");
  }
  // The model's own evidence first; where it has none, this CPU's block, as ONNX Runtime would
  // read it here.
  plan.block = e.stated != 0 ? e.stated : e.eight ? 8 : machine_block();
  Status st;
  for_each_graph(graph, [&](Graph& g) {
    if (!st.ok()) return;
    Checker c(g, plan.block);
    st = c.run();
    if (!st.ok()) return;
    plan.channels[&g] = Unpadder(g, c).run();
    for (const auto& [index, split] : c.reshapes()) rewrite_reshape(g, index, split, plan.block);
    c.forget_split_shapes();
    if (!c.reshapes().empty()) st = g.finalize();
  });
  RECUR_RETURN_IF_ERROR(st);
  return plan;
}

LowerFn nchwc_lowering(std::string_view op) {
  if (op == "Conv") return lower_conv;
  if (op == "ReorderInput") return lower_reorder_input;
  if (op == "ReorderOutput") return lower_reorder_output;
  if (op == "Upsample") return lower_upsample;
  if (op == "MaxPool") {
    return [](Lowering& l) {
      return lower_pool(l, "MaxPool", 12,
                        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                         "storage_order", "strides"});
    };
  }
  if (op == "AveragePool") {
    return [](Lowering& l) {
      return lower_pool(l, "AveragePool", 19,
                        {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                         "pads", "strides"});
    };
  }
  if (op == "GlobalMaxPool")
    return [](Lowering& l) { return lower_pool(l, "GlobalMaxPool", 1, {}); };
  if (op == "GlobalAveragePool")
    return [](Lowering& l) { return lower_pool(l, "GlobalAveragePool", 1, {}); };
  return [](Lowering& l) {
    return l.error(
        "is not one of ONNX Runtime's NCHWc operators recur reads (Conv, "
        "ReorderInput, ReorderOutput, MaxPool, AveragePool, GlobalMaxPool, "
        "GlobalAveragePool, Upsample)");
  };
}

}  // namespace recur::lowering
