// The graph IR: values, nodes and graphs (subgraphs included), independent of protobuf.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "recur/tensor.h"
#include "recur/value_info.h"
#include "runtime/core/status.h"
#include "runtime/graph/attribute.h"

namespace recur {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// What is known statically about a value: its dtype and, if known, its shape.
struct TypeInfo {
  DType dtype = DType::kUndefined;
  std::optional<std::vector<Dim>> shape;
  DType element_dtype = DType::kUndefined;  // for dtype kSequence: the tensors' type
  // The key and value types of a map (dtype kMap) or of a sequence's maps (element_dtype kMap).
  DType map_key_dtype = DType::kUndefined;
  DType map_value_dtype = DType::kUndefined;
  bool optional = false;  // an ONNX optional: the value may be none

  static TypeInfo of(DType dtype, const Shape& shape);
  bool has_rank() const { return shape.has_value(); }
  int64_t rank() const { return shape ? static_cast<int64_t>(shape->size()) : -1; }
  bool is_static() const;         // every dimension fixed
  Shape static_shape() const;     // requires is_static()
  std::string to_string() const;  // "float32[batch,3]"
};

struct Value {
  std::string name;
  TypeInfo type;
  int producer = -1;           // index of the producing node, or -1
  std::vector<int> consumers;  // nodes reading it (implicit inputs included)
  bool is_graph_input = false;
  bool is_graph_output = false;
  bool is_initializer = false;  // has a value in Graph::initializers()
  bool is_outer = false;        // captured from an enclosing graph
};

struct Node {
  int index = -1;
  std::string name;  // never empty: the loader names anonymous nodes "<op>_<index>"
  std::string op_type;
  std::string domain;            // "" for the default ONNX domain
  int opset = 0;                 // the model's opset for the node's domain
  std::vector<ValueId> inputs;   // kNoValue for an omitted optional input ("")
  std::vector<ValueId> outputs;  // kNoValue for an omitted optional output
  // Values of enclosing scopes that the node's subgraphs read.
  std::vector<ValueId> implicit_inputs;
  std::map<std::string, Attribute, std::less<>> attributes;
  // Lines for --explain left by graph rewrites ("fused 2 LSTM layers: ...").
  std::vector<std::string> notes;

  const Attribute* attr(std::string_view name) const;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != kNoValue; }
  bool has_output(size_t i) const { return i < outputs.size() && outputs[i] != kNoValue; }
  // "node 'lstm_1' (LSTM)": the prefix of every error about this node.
  std::string describe() const;
  std::string domain_op() const;  // "LSTM", "com.microsoft::Foo"
  // Whether the node's outputs may be random draws, which differ between runs over the same
  // inputs: the Random* operators, Bernoulli, Multinomial, and a Dropout told its training
  // mode at run time. Such a node is never folded at load nor kept in a CUDA graph recording.
  bool draws_random() const;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // --- Building (the loader and the optimiser use these) ---
  // A new value; names must be unique within the graph (empty names are allowed and unique).
  ValueId add_value(std::string name, TypeInfo type = {});
  // The value of this graph named `name`, or kNoValue.
  ValueId find(std::string_view name) const;
  // Appends a node and returns its index; inputs and outputs must already exist.
  int add_node(Node node);
  void set_initializer(ValueId v, Tensor t);
  void remove_initializer(ValueId v);
  // Marks the value at once, not only at finalize(): the loader checks an initializer that
  // is also a graph input against the declaration before the graph is finalized.
  void add_input(ValueId v) {
    inputs_.push_back(v);
    values_.at(static_cast<size_t>(v)).is_graph_input = true;
  }
  void add_output(ValueId v) { outputs_.push_back(v); }
  void add_outer_ref(ValueId v) { outer_refs_.push_back(v); }
  void set_name(std::string name) { name_ = std::move(name); }
  void set_opsets(std::map<std::string, int> opsets) { opsets_ = std::move(opsets); }
  void set_parent(const Graph* parent) { parent_ = parent; }
  // Recomputes producers, consumers and the topological order; fails on a value produced
  // twice, a reference to nothing, or a cycle.
  Status finalize();
  // Drops the nodes whose indices are marked, renumbering the rest. Values are kept.
  void remove_nodes(const std::vector<bool>& dead);

  // --- Reading ---
  const std::string& name() const { return name_; }
  size_t num_values() const { return values_.size(); }
  const Value& value(ValueId v) const { return values_.at(static_cast<size_t>(v)); }
  Value& mutable_value(ValueId v) { return values_.at(static_cast<size_t>(v)); }
  const std::vector<Node>& nodes() const { return nodes_; }
  Node& mutable_node(int i) { return nodes_.at(static_cast<size_t>(i)); }
  const Node& node(int i) const { return nodes_.at(static_cast<size_t>(i)); }
  const std::vector<int>& topo_order() const { return topo_order_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<ValueId>& outer_refs() const { return outer_refs_; }
  const std::unordered_map<ValueId, Tensor>& initializers() const { return initializers_; }
  const Tensor* initializer(ValueId v) const;
  // An initializer that is not also a graph input: a true constant the user cannot override.
  const Tensor* constant(ValueId v) const;
  const std::map<std::string, int>& opsets() const { return opsets_; }
  int opset(std::string_view domain) const;  // 0 if not imported
  const Graph* parent() const { return parent_; }

 private:
  std::string name_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<ValueId> outer_refs_;
  std::unordered_map<ValueId, Tensor> initializers_;
  std::unordered_map<std::string, ValueId> by_name_;
  std::vector<int> topo_order_;
  std::map<std::string, int> opsets_;
  const Graph* parent_ = nullptr;
};

// The value of a Constant node, from whichever of its value attributes it has (sparse_value
// arrives dense from the loader).
Result<Tensor> constant_node_value(const Node& node);

// Typed attribute access with a sticky error: read everything, then check status() once.
class AttrReader {
 public:
  explicit AttrReader(const Node& node) : node_(node) {}

  bool has(std::string_view name) const { return node_.attr(name) != nullptr; }
  int64_t get_int(std::string_view name, int64_t def);
  float get_float(std::string_view name, float def);
  std::string get_string(std::string_view name, std::string def = {});
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> def = {});
  std::vector<float> get_floats(std::string_view name, std::vector<float> def = {});
  std::vector<std::string> get_strings(std::string_view name, std::vector<std::string> def = {});
  const Tensor* get_tensor(std::string_view name);  // nullptr if absent
  const Graph* get_graph(std::string_view name);    // nullptr if absent
  // Like get_int, but records an error if the attribute is absent.
  int64_t require_int(std::string_view name);
  const Graph* require_graph(std::string_view name);

  const Status& status() const { return status_; }

 private:
  const Attribute* find(std::string_view name, AttrType want);
  const Node& node_;
  Status status_;
};

}  // namespace recur
