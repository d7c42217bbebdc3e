#include "runtime/graph/graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>

namespace recur {

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kUndefined:
      return "undefined";
    case AttrType::kFloat:
      return "float";
    case AttrType::kInt:
      return "int";
    case AttrType::kString:
      return "string";
    case AttrType::kTensor:
      return "tensor";
    case AttrType::kGraph:
      return "graph";
    case AttrType::kFloats:
      return "floats";
    case AttrType::kInts:
      return "ints";
    case AttrType::kStrings:
      return "strings";
    case AttrType::kTensors:
      return "tensors";
    case AttrType::kGraphs:
      return "graphs";
    case AttrType::kType:
      return "type";
  }
  return "?";
}

TypeInfo TypeInfo::of(DType dtype, const Shape& shape) {
  TypeInfo t;
  t.dtype = dtype;
  t.shape.emplace();
  for (int64_t d : shape) t.shape->push_back(Dim{d, {}});
  return t;
}

bool TypeInfo::is_static() const {
  if (!shape) return false;
  for (const Dim& d : *shape)
    if (!d.is_fixed()) return false;
  return true;
}

Shape TypeInfo::static_shape() const {
  Shape s;
  if (shape)
    for (const Dim& d : *shape) s.push_back(d.value);
  return s;
}

std::string TypeInfo::to_string() const {
  const std::string map = "map(" + std::string(dtype_name(map_key_dtype)) + "," +
                          std::string(dtype_name(map_value_dtype)) + ")";
  if (dtype == DType::kMap) return map;
  if (dtype == DType::kSequence) {
    return "sequence(" +
           (element_dtype == DType::kMap ? map : std::string(dtype_name(element_dtype))) + ")";
  }
  ValueInfo vi;
  vi.shape = shape;
  return std::string(dtype_name(dtype)) + vi.shape_string();
}

const Attribute* Node::attr(std::string_view n) const {
  auto it = attributes.find(n);
  return it == attributes.end() ? nullptr : &it->second;
}

std::string Node::describe() const { return "node '" + name + "' (" + domain_op() + ")"; }

std::string Node::domain_op() const {
  if (domain.empty() || domain == "ai.onnx") return op_type;
  return domain + "::" + op_type;
}

bool Node::draws_random() const {
  if (!(domain.empty() || domain == "ai.onnx")) return false;
  static const std::set<std::string, std::less<>> kOps = {"RandomNormal",  "RandomNormalLike",
                                                          "RandomUniform", "RandomUniformLike",
                                                          "Multinomial",   "Bernoulli"};
  return kOps.count(op_type) > 0 || (op_type == "Dropout" && has_input(2));
}

ValueId Graph::add_value(std::string name, TypeInfo type) {
  const auto id = static_cast<ValueId>(values_.size());
  if (!name.empty()) by_name_.emplace(name, id);
  Value v;
  v.name = std::move(name);
  v.type = std::move(type);
  values_.push_back(std::move(v));
  return id;
}

ValueId Graph::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? kNoValue : it->second;
}

int Graph::add_node(Node node) {
  node.index = static_cast<int>(nodes_.size());
  nodes_.push_back(std::move(node));
  return nodes_.back().index;
}

void Graph::set_initializer(ValueId v, Tensor t) {
  values_.at(static_cast<size_t>(v)).is_initializer = true;
  values_[static_cast<size_t>(v)].type = TypeInfo::of(t.dtype(), t.shape());
  initializers_[v] = std::move(t);
}

void Graph::remove_initializer(ValueId v) {
  initializers_.erase(v);
  values_.at(static_cast<size_t>(v)).is_initializer = false;
}

const Tensor* Graph::initializer(ValueId v) const {
  auto it = initializers_.find(v);
  return it == initializers_.end() ? nullptr : &it->second;
}

const Tensor* Graph::constant(ValueId v) const {
  if (v == kNoValue || value(v).is_graph_input) return nullptr;
  return initializer(v);
}

int Graph::opset(std::string_view domain) const {
  const std::string key = domain == "ai.onnx" ? std::string() : std::string(domain);
  auto it = opsets_.find(key);
  if (it != opsets_.end()) return it->second;
  return parent_ ? parent_->opset(domain) : 0;
}

Status Graph::finalize() {
  for (Value& v : values_) {
    v.producer = -1;
    v.consumers.clear();
    v.is_graph_input = false;
    v.is_graph_output = false;
  }
  for (ValueId v : inputs_) values_[static_cast<size_t>(v)].is_graph_input = true;
  for (ValueId v : outputs_) values_[static_cast<size_t>(v)].is_graph_output = true;

  for (Node& n : nodes_) {
    for (ValueId o : n.outputs) {
      if (o == kNoValue) continue;
      Value& v = values_[static_cast<size_t>(o)];
      if (v.producer >= 0) {
        return invalid_model("value '" + v.name + "' is produced by both " +
                             nodes_[static_cast<size_t>(v.producer)].describe() + " and " +
                             n.describe());
      }
      if (v.is_graph_input || v.is_initializer || v.is_outer) {
        return invalid_model(n.describe() + " writes '" + v.name +
                             "', which is already a graph input or initializer");
      }
      v.producer = n.index;
    }
  }
  auto defined = [&](const Value& v) {
    return v.producer >= 0 || v.is_graph_input || v.is_initializer || v.is_outer;
  };
  for (Node& n : nodes_) {
    auto check = [&](ValueId id) -> Status {
      if (id == kNoValue) return ok_status();
      Value& v = values_[static_cast<size_t>(id)];
      if (!defined(v)) {
        return invalid_model(n.describe() + " reads '" + v.name +
                             "', which is not a graph input, an initializer or any node's output");
      }
      if (v.consumers.empty() || v.consumers.back() != n.index) v.consumers.push_back(n.index);
      return ok_status();
    };
    for (ValueId id : n.inputs) RECUR_RETURN_IF_ERROR(check(id));
    for (ValueId id : n.implicit_inputs) RECUR_RETURN_IF_ERROR(check(id));
  }
  for (ValueId o : outputs_) {
    if (!defined(values_[static_cast<size_t>(o)])) {
      return invalid_model("graph output '" + values_[static_cast<size_t>(o)].name +
                           "' is not produced by any node, input or initializer");
    }
  }

  // Kahn's algorithm, taking ready nodes in file order so the order is deterministic. A node
  // waits for each distinct produced value it reads, which is once in the value's consumers
  // (counting each read instead meant scanning the inputs per edge: quadratic in a Sum's).
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<int> counted(values_.size(), -1);
  for (const Node& n : nodes_) {
    auto count = [&](ValueId id) {
      if (id == kNoValue || values_[static_cast<size_t>(id)].producer < 0) return;
      if (counted[static_cast<size_t>(id)] == n.index) return;
      counted[static_cast<size_t>(id)] = n.index;
      ++pending[static_cast<size_t>(n.index)];
    };
    for (ValueId id : n.inputs) count(id);
    for (ValueId id : n.implicit_inputs) count(id);
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (const Node& n : nodes_)
    if (pending[static_cast<size_t>(n.index)] == 0) ready.push(n.index);
  topo_order_.clear();
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    topo_order_.push_back(i);
    for (ValueId o : nodes_[static_cast<size_t>(i)].outputs) {
      if (o == kNoValue) continue;
      for (int c : values_[static_cast<size_t>(o)].consumers) {
        if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
      }
    }
  }
  if (topo_order_.size() != nodes_.size()) {
    for (const Node& n : nodes_) {
      if (pending[static_cast<size_t>(n.index)] > 0) {
        return invalid_model("the graph has a cycle through " + n.describe());
      }
    }
  }
  return ok_status();
}

void Graph::remove_nodes(const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  for (Node& n : nodes_) {
    if (static_cast<size_t>(n.index) < dead.size() && dead[static_cast<size_t>(n.index)]) continue;
    n.index = static_cast<int>(kept.size());
    kept.push_back(std::move(n));
  }
  nodes_ = std::move(kept);
}

Result<Tensor> constant_node_value(const Node& node) {
  if (node.attributes.size() != 1) {
    return invalid_model(node.describe() + ": exactly one value attribute is required");
  }
  const auto& [name, a] = *node.attributes.begin();
  // sparse_value is held dense (the loader expands it).
  if ((name == "value" || name == "sparse_value") && a.type == AttrType::kTensor) return a.t;
  if (name == "value_string" && a.type == AttrType::kString) return Tensor::scalar(a.s);
  if (name == "value_strings" && a.type == AttrType::kStrings) {
    return Tensor::from_vector<std::string>({static_cast<int64_t>(a.strings.size())}, a.strings);
  }
  if (name == "value_float" && a.type == AttrType::kFloat) return Tensor::scalar(a.f);
  if (name == "value_int" && a.type == AttrType::kInt) return Tensor::scalar(a.i);
  if (name == "value_floats" && a.type == AttrType::kFloats) {
    return Tensor::from_vector<float>({static_cast<int64_t>(a.floats.size())}, a.floats);
  }
  if (name == "value_ints" && a.type == AttrType::kInts) {
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints);
  }
  return not_implemented(node.describe() + ": Constant attribute '" + name + "' (" +
                         attr_type_name(a.type) + ") is not supported");
}

const Attribute* AttrReader::find(std::string_view name, AttrType want) {
  const Attribute* a = node_.attr(name);
  if (!a) return nullptr;
  if (a->type != want) {
    if (status_.ok()) {
      status_ = invalid_model(node_.describe() + ": attribute '" + std::string(name) + "' is " +
                              attr_type_name(a->type) + ", expected " + attr_type_name(want));
    }
    return nullptr;
  }
  return a;
}

int64_t AttrReader::get_int(std::string_view name, int64_t def) {
  const Attribute* a = find(name, AttrType::kInt);
  return a ? a->i : def;
}

float AttrReader::get_float(std::string_view name, float def) {
  const Attribute* a = find(name, AttrType::kFloat);
  return a ? a->f : def;
}

std::string AttrReader::get_string(std::string_view name, std::string def) {
  const Attribute* a = find(name, AttrType::kString);
  return a ? a->s : def;
}

std::vector<int64_t> AttrReader::get_ints(std::string_view name, std::vector<int64_t> def) {
  const Attribute* a = find(name, AttrType::kInts);
  return a ? a->ints : def;
}

std::vector<float> AttrReader::get_floats(std::string_view name, std::vector<float> def) {
  const Attribute* a = find(name, AttrType::kFloats);
  return a ? a->floats : def;
}

std::vector<std::string> AttrReader::get_strings(std::string_view name,
                                                 std::vector<std::string> def) {
  const Attribute* a = find(name, AttrType::kStrings);
  return a ? a->strings : def;
}

const Tensor* AttrReader::get_tensor(std::string_view name) {
  const Attribute* a = find(name, AttrType::kTensor);
  return a ? &a->t : nullptr;
}

const Graph* AttrReader::get_graph(std::string_view name) {
  const Attribute* a = find(name, AttrType::kGraph);
  return a ? a->g.get() : nullptr;
}

int64_t AttrReader::require_int(std::string_view name) {
  if (!has(name) && status_.ok()) {
    status_ = invalid_model(node_.describe() + ": required attribute '" + std::string(name) +
                            "' is missing");
  }
  return get_int(name, 0);
}

const Graph* AttrReader::require_graph(std::string_view name) {
  if (!has(name) && status_.ok()) {
    status_ = invalid_model(node_.describe() + ": required attribute '" + std::string(name) +
                            "' is missing");
  }
  return get_graph(name);
}

}  // namespace recur
