// What lowering one contrib node into ONNX nodes needs (lower_contrib.cc, lower_qlinear.cc):
// the builder of the replacement, and a few attribute helpers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "recur/dtype.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur::lowering {

inline constexpr std::string_view kMicrosoft = "com.microsoft";

struct NchwcPlan;

// The ONNX nodes, values and constants that replace one node. The node that does the
// operator's work keeps the original's name (errors and --explain name what the user's model
// calls it); the others, and the new values, are named "<original>/<what>".
class Lowering {
 public:
  // `last_round`: no later shape inference will tell more, so what is unknown is an error.
  Lowering(Graph& g, int index, bool last_round) : g_(g), index_(index), last_round_(last_round) {}

  // Leaves the node for the next round, after shape inference has run over what this round
  // lowered, when a rank it needs is unknown; an error in the last round.
  Status needs_shapes(const std::string& why) {
    if (last_round_) return error(why);
    deferred_ = true;
    return ok_status();
  }
  bool deferred() const { return deferred_; }
  // No later shape inference will tell more: what is still unknown is known only at run time.
  bool last_round() const { return last_round_; }
  // What prepare_nchwc found (lower_nchwc.cc): the channel block of ONNX Runtime's NCHWc
  // layout in this model (0 where it has none), and the channels of a blocked tensor held
  // without its padding (-1 where it keeps it).
  void set_nchwc(const NchwcPlan* plan) { nchwc_ = plan; }
  int64_t nchwc_block() const;
  int64_t nchwc_channels(ValueId v) const;

  const Node& original() const { return g_.node(index_); }
  const Graph& graph() const { return g_; }
  ValueId in(size_t i) const { return original().has_input(i) ? original().inputs[i] : kNoValue; }
  ValueId out(size_t i) const {
    return original().has_output(i) ? original().outputs[i] : kNoValue;
  }
  DType dtype(ValueId v) const { return g_.value(v).type.dtype; }
  int64_t rank(ValueId v) const { return g_.value(v).type.rank(); }
  // Dimension i of v's shape where shape inference fixed it, else -1.
  int64_t dim(ValueId v, int64_t i) const {
    const auto& shape = g_.value(v).type.shape;
    if (!shape || i < 0 || i >= static_cast<int64_t>(shape->size())) return -1;
    return (*shape)[static_cast<size_t>(i)].value;
  }

  ValueId temp(const std::string& what, DType t) {
    TypeInfo ti;
    ti.dtype = t;
    return g_.add_value(fresh_value_name(what), ti);
  }

  // A scalar constant of the floating type `t`.
  Result<ValueId> scalar(const std::string& what, DType t, double v) {
    Tensor c;
    switch (t) {
      case DType::kFloat32:
        c = Tensor::scalar(static_cast<float>(v));
        break;
      case DType::kFloat64:
        c = Tensor::scalar(v);
        break;
      case DType::kFloat16:
        c = Tensor::scalar(Float16(static_cast<float>(v)));
        break;
      case DType::kBFloat16:
        c = Tensor::scalar(BFloat16(static_cast<float>(v)));
        break;
      default:
        return error("its input is " + std::string(dtype_name(t)) +
                     "; this operator takes float16, bfloat16, float32 or float64");
    }
    return constant(what, std::move(c));
  }

  // A scalar 0 of the 8-bit integer type `t` (a quantized zero point).
  Result<ValueId> zero_point(const std::string& what, DType t) {
    Tensor c;
    if (t == DType::kUInt8) {
      c = Tensor::scalar(uint8_t{0});
    } else if (t == DType::kInt8) {
      c = Tensor::scalar(int8_t{0});
    } else {
      return error("its quantized input is " + std::string(dtype_name(t)) +
                   "; this operator takes uint8 or int8");
    }
    return constant(what, std::move(c));
  }

  ValueId int64s(const std::string& what, const std::vector<int64_t>& v) {
    return constant(what, Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  }

  // A new value "<original>/<what>" holding `c`.
  ValueId constant(const std::string& what, Tensor c) {
    const ValueId id = temp(what, c.dtype());
    g_.set_initializer(id, std::move(c));
    return id;
  }

  bool is_constant(ValueId v) const { return v != kNoValue && g_.constant(v) != nullptr; }

  // Appends a node, its trailing omitted (kNoValue) inputs and outputs dropped as ONNX allows.
  // The first one, or the one marked with keep_name(), takes the original's name when they are
  // committed; the others get "<original>/<op>".
  Node& add(std::string op, int opset, std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
    while (!inputs.empty() && inputs.back() == kNoValue) inputs.pop_back();
    while (!outputs.empty() && outputs.back() == kNoValue) outputs.pop_back();
    Node n;
    n.op_type = std::move(op);
    n.opset = opset;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    nodes_.push_back(std::move(n));
    return nodes_.back();
  }

  // The node added last keeps the original's name (and its notes): the operation a reader
  // looks for, which the transpositions of constants before it, folded at load, are not.
  void keep_name() { primary_ = nodes_.size() - 1; }
  ValueId last_output() const { return nodes_.back().outputs[0]; }

  // A node writing `y` (a new value of `t` when y is kNoValue); returns what it writes.
  ValueId unary(std::string op, int opset, ValueId x, ValueId y, DType t) {
    if (y == kNoValue) y = temp(op, t);
    add(std::move(op), opset, {x}, {y});
    return y;
  }
  // Add, Sub, Mul and Div, whose latest opset is 14.
  ValueId binary(std::string op, ValueId a, ValueId b, ValueId y, DType t) {
    if (y == kNoValue) y = temp(op, t);
    add(std::move(op), 14, {a, b}, {y});
    return y;
  }

  // The first `count` inputs must be given (the schema check counts inputs, but an empty name
  // passes it).
  Status require_inputs(size_t count) const {
    for (size_t i = 0; i < count; ++i)
      if (in(i) == kNoValue) return error("input " + std::to_string(i) + " is required");
    return ok_status();
  }
  // The same for the inputs at `which`, where optional ones come between.
  Status require_inputs(std::initializer_list<size_t> which) const {
    for (size_t i : which)
      if (in(i) == kNoValue) return error("input " + std::to_string(i) + " is required");
    return ok_status();
  }

  Status error(const std::string& why) const {
    return invalid_model(original().describe() + ": " + why);
  }

  // Types the original's output i, where it is of unknown type, as `t` (commit types the
  // rest as it says).
  void type_output(size_t i, DType t) {
    if (out(i) != kNoValue && g_.value(out(i)).type.dtype == DType::kUndefined)
      g_.mutable_value(out(i)).type.dtype = t;
  }

  // Puts the nodes made in the graph: the first in the original's place, the rest appended.
  // The original's outputs of unknown type take theirs, so that a contrib node reading one is
  // lowered in the same round: `t` for outputs 0 and 3 (the result and the skip norms' sum),
  // float32 for the statistics between.
  void commit(const std::string& summary, DType t) {
    if (deferred_) return;  // what was made is dropped; the next round starts again
    for (size_t i = 0; i < original().outputs.size(); ++i) {
      const ValueId v = out(i);
      if (v == kNoValue || g_.value(v).type.dtype != DType::kUndefined) continue;
      g_.mutable_value(v).type.dtype = (i == 0 || i == 3) ? t : DType::kFloat32;
    }
    std::string ops;
    for (size_t i = 0; i < nodes_.size(); ++i) ops += (i ? ", " : "") + nodes_[i].op_type;
    std::swap(nodes_[0], nodes_[primary_]);
    for (size_t i = 1; i < nodes_.size(); ++i) nodes_[i].name = fresh_node_name(i);
    nodes_[0].name = original().name;
    nodes_[0].notes = original().notes;
    nodes_[0].notes.push_back("lowered ONNX Runtime's " + original().domain_op() + " '" +
                              original().name + "' (" + summary + ") to " + ops);
    nodes_[0].index = index_;
    g_.mutable_node(index_) = std::move(nodes_[0]);
    for (size_t i = 1; i < nodes_.size(); ++i) g_.add_node(std::move(nodes_[i]));
    nodes_.clear();
  }

 private:
  bool taken(const std::string& name) const {
    for (const Graph* g = &g_; g; g = g->parent())
      if (g->find(name) != kNoValue) return true;
    return false;
  }
  std::string fresh_value_name(const std::string& what) {
    const std::string base = original().name + "/" + what;
    std::string name = base;
    for (int k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);
    return name;
  }
  // "<original>/<op>" for nodes_[i], "_K" added where an earlier one has that name.
  std::string fresh_node_name(size_t i) const {
    const std::string base = original().name + "/" + nodes_[i].op_type;
    std::string name = base;
    for (int k = 1; std::any_of(nodes_.begin() + 1, nodes_.begin() + static_cast<ptrdiff_t>(i),
                                [&](const Node& n) { return n.name == name; });
         ++k) {
      name = base + "_" + std::to_string(k);
    }
    return name;
  }

  Graph& g_;
  int index_;
  bool last_round_;
  bool deferred_ = false;
  const NchwcPlan* nchwc_ = nullptr;
  std::vector<Node> nodes_;
  size_t primary_ = 0;
};

// A float as a person writes it ("1e-05", "1.702"), for notes.
inline std::string short_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  return buf;
}

inline void set_float(Node& n, const char* name, float v) {
  Attribute a;
  a.type = AttrType::kFloat;
  a.f = v;
  n.attributes[name] = std::move(a);
}

inline void set_int(Node& n, const char* name, int64_t v) {
  Attribute a;
  a.type = AttrType::kInt;
  a.i = v;
  n.attributes[name] = std::move(a);
}

inline void set_string(Node& n, const char* name, std::string v) {
  Attribute a;
  a.type = AttrType::kString;
  a.s = std::move(v);
  n.attributes[name] = std::move(a);
}

inline void set_ints(Node& n, const char* name, std::vector<int64_t> v) {
  Attribute a;
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  n.attributes[name] = std::move(a);
}

inline void copy_attrs(const Node& from, Node& to, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const Attribute* a = from.attr(name)) to.attributes[name] = *a;
}

// The lowering of one operator: builds the replacement in `l` and commits it, leaves it for
// a later round (l.needs_shapes), or fails naming the node.
using LowerFn = Status (*)(Lowering&);

// The lowering of com.microsoft's QLinear operator `op` (lower_qlinear.cc), or null.
LowerFn qlinear_lowering(std::string_view op);
// The lowering of com.microsoft's attention operator `op` (lower_attention.cc), or null.
LowerFn attention_lowering(std::string_view op);

// ONNX Runtime's NCHWc layout (lower_nchwc.cc).
inline constexpr std::string_view kNchwc = "com.microsoft.nchwc";
// The lowering of com.microsoft.nchwc's operator `op`, or null.
LowerFn nchwc_lowering(std::string_view op);
// How a model's NCHWc region is lowered: the channel block (0 where no node is in the NCHWc
// domain), and per graph the blocked tensors held with their logical channels only, without
// the padding to a whole block.
struct NchwcPlan {
  int64_t block = 0;
  std::map<const Graph*, std::unordered_map<ValueId, int64_t>> channels;
};
// The plan, after checking that every use of a blocked tensor is one recur can read in ONNX's
// layout, and rewriting the Reshapes that split the channels into blocks (ONNX Runtime writes
// them around an Add whose operands' shapes it could not prove equal).
Result<NchwcPlan> prepare_nchwc(Graph& graph);
inline int64_t Lowering::nchwc_block() const { return nchwc_ ? nchwc_->block : 0; }
inline int64_t Lowering::nchwc_channels(ValueId v) const {
  if (!nchwc_) return -1;
  const auto g = nchwc_->channels.find(&g_);
  if (g == nchwc_->channels.end()) return -1;
  const auto c = g->second.find(v);
  return c == g->second.end() ? -1 : c->second;
}

// The fused activation of a FusedConv or an NCHWc Conv (its `activation` and
// `activation_params`), from `x` to `y`; no node where it has none (then x is y).
Status lower_conv_activation(Lowering& l, ValueId x, ValueId y, DType t);

}  // namespace recur::lowering
