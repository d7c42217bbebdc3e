#include "runtime/engine/onnx/schema_check.h"

#include <algorithm>
#include <climits>
#include <string_view>
#include <unordered_map>

#include <onnx/defs/schema.h>

namespace recur {

namespace {

// An ONNX attribute type; sparse tensors have no AttrType because the loader refuses them.
enum class AttrKind {
  kFloat,
  kInt,
  kString,
  kTensor,
  kGraph,
  kFloats,
  kInts,
  kStrings,
  kTensors,
  kGraphs,
  kType,
  kSparse,
};

struct AttrSpec {
  const char* name;
  AttrKind kind;
  bool required;
};

// An operator version after the registry's last (see kRegistryMaxOnnxOpset) that changed its
// attributes or input/output counts, or an operator the registry lacks.
struct OpDelta {
  const char* domain;
  const char* op;
  int since;
  bool deprecated;
  int min_in, max_in, min_out, max_out;
  std::vector<AttrSpec> attrs;
};

const std::vector<OpDelta>& deltas() {
  static const std::vector<OpDelta> table = {
#include "runtime/engine/onnx/schema_deltas.inc"
  };
  return table;
}

// domain + '\n' + op -> that operator's deltas, by increasing version.
const std::unordered_map<std::string, std::vector<const OpDelta*>>& delta_index() {
  static const auto index = [] {
    std::unordered_map<std::string, std::vector<const OpDelta*>> m;
    for (const OpDelta& d : deltas()) m[std::string(d.domain) + '\n' + d.op].push_back(&d);
    for (auto& [k, v] : m) {
      std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->since < b->since; });
    }
    return m;
  }();
  return index;
}

AttrKind kind_of(onnx::AttributeProto::AttributeType t) {
  using AP = onnx::AttributeProto;
  switch (t) {
    case AP::FLOAT:
      return AttrKind::kFloat;
    case AP::INT:
      return AttrKind::kInt;
    case AP::STRING:
      return AttrKind::kString;
    case AP::TENSOR:
      return AttrKind::kTensor;
    case AP::GRAPH:
      return AttrKind::kGraph;
    case AP::FLOATS:
      return AttrKind::kFloats;
    case AP::INTS:
      return AttrKind::kInts;
    case AP::STRINGS:
      return AttrKind::kStrings;
    case AP::TENSORS:
      return AttrKind::kTensors;
    case AP::GRAPHS:
      return AttrKind::kGraphs;
    case AP::TYPE_PROTO:
      return AttrKind::kType;
    default:
      return AttrKind::kSparse;
  }
}

bool matches(AttrKind want, AttrType have) {
  switch (want) {
    case AttrKind::kFloat:
      return have == AttrType::kFloat;
    case AttrKind::kInt:
      return have == AttrType::kInt;
    case AttrKind::kString:
      return have == AttrType::kString;
    case AttrKind::kTensor:
      return have == AttrType::kTensor;
    case AttrKind::kGraph:
      return have == AttrType::kGraph;
    case AttrKind::kFloats:
      return have == AttrType::kFloats;
    case AttrKind::kInts:
      return have == AttrType::kInts;
    case AttrKind::kStrings:
      return have == AttrType::kStrings;
    case AttrKind::kTensors:
      return have == AttrType::kTensors;
    case AttrKind::kGraphs:
      return have == AttrType::kGraphs;
    case AttrKind::kType:
      return have == AttrType::kType;
    case AttrKind::kSparse:
      return false;
  }
  return false;
}

const char* kind_name(AttrKind k) {
  constexpr const char* kNames[] = {
      "a float",           "an int",           "a string",       "a tensor",
      "a graph",           "a list of floats", "a list of ints", "a list of strings",
      "a list of tensors", "a list of graphs", "a type",         "a sparse tensor"};
  return kNames[static_cast<int>(k)];
}

// One operator version's schema, from the registry or from the delta table.
struct Schema {
  const onnx::OpSchema* reg = nullptr;
  const OpDelta* delta = nullptr;

  bool found() const { return reg || delta; }
  bool deprecated() const { return delta ? delta->deprecated : reg->Deprecated(); }
  int min_in() const { return delta ? delta->min_in : reg->min_input(); }
  int max_in() const { return delta ? delta->max_in : reg->max_input(); }
  int min_out() const { return delta ? delta->min_out : reg->min_output(); }
  int max_out() const { return delta ? delta->max_out : reg->max_output(); }
  // The attribute's declared type and required flag; false if the schema has none by that name.
  bool attribute(const std::string& name, AttrKind* kind) const {
    if (delta) {
      for (const AttrSpec& a : delta->attrs) {
        if (name == a.name) {
          *kind = a.kind;
          return true;
        }
      }
      return false;
    }
    const auto& attrs = reg->attributes();
    const auto it = attrs.find(name);
    if (it == attrs.end()) return false;
    *kind = kind_of(it->second.type);
    return true;
  }
  template <typename F>
  void for_each_required(F f) const {
    if (delta) {
      for (const AttrSpec& a : delta->attrs)
        if (a.required) f(std::string_view(a.name));
      return;
    }
    for (const auto& [name, a] : reg->attributes())
      if (a.required) f(std::string_view(name));
  }
};

Schema find_schema(const std::string& domain, const std::string& op, int opset) {
  Schema s;
  const bool ml = domain == "ai.onnx.ml";
  if (!domain.empty() && !ml) return s;
  const auto& index = delta_index();
  const auto it = index.find(domain + '\n' + op);
  if (it != index.end()) {
    for (const OpDelta* d : it->second)
      if (d->since <= opset) s.delta = d;
    if (s.delta) return s;
  }
  const int cap = ml ? kRegistryMaxMlOpset : kRegistryMaxOnnxOpset;
  s.reg = onnx::OpSchemaRegistry::Schema(op, std::min(opset, cap), domain);
  return s;
}

// The first opset after the node's whose version of the operator declares `attr`, or 0: an
// attribute from the future says which opset the model should import.
int later_opset_with(const Node& node, const std::string& attr) {
  const int last = node.domain.empty() ? kMaxOnnxOpset : kMaxMlOpset;
  AttrKind kind;
  for (int v = node.opset + 1; v <= last; ++v) {
    const Schema s = find_schema(node.domain, node.op_type, v);
    if (s.found() && !s.deprecated() && s.attribute(attr, &kind)) return v;
  }
  return 0;
}

std::string count_range(int lo, int hi) {
  if (hi == INT_MAX) return "at least " + std::to_string(lo);
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

// Trailing omitted ("") optional inputs or outputs do not count against the maximum.
int present_count(const std::vector<ValueId>& ids) {
  int n = static_cast<int>(ids.size());
  while (n > 0 && ids[static_cast<size_t>(n - 1)] == kNoValue) --n;
  return n;
}

std::string check_counts(const Node& node, const Schema& s) {
  const auto check = [&](const std::vector<ValueId>& ids, int lo, int hi, const char* what) {
    const int given = static_cast<int>(ids.size());
    if (given >= lo && present_count(ids) <= hi) return std::string();
    return "has " + std::to_string(given) + " " + what + "s; " + node.op_type + "-" +
           std::to_string(node.opset) + " takes " + count_range(lo, hi);
  };
  std::string why = check(node.inputs, s.min_in(), s.max_in(), "input");
  if (why.empty()) why = check(node.outputs, s.min_out(), s.max_out(), "output");
  return why;
}

}  // namespace

Status check_node_schema(const Node& node, const std::string& where, bool strict,
                         std::vector<std::string>* warnings) {
  const Schema s = find_schema(node.domain, node.op_type, node.opset);
  if (!s.found() || s.deprecated()) return ok_status();
  const std::string pfx = where + ": " + node.describe() + ": ";
  for (const auto& [name, a] : node.attributes) {
    AttrKind kind;
    if (!s.attribute(name, &kind)) {
      const int later = later_opset_with(node, name);
      const std::string msg = "unknown attribute '" + name + "' (not in the schema of " +
                              node.op_type + "-" + std::to_string(node.opset) +
                              (later ? "; it needs opset " + std::to_string(later) + ")" : ")");
      if (strict) return invalid_model(pfx + msg);
      if (warnings) warnings->push_back(pfx + msg + "; ignored (strict_schema is off)");
      continue;
    }
    if (!matches(kind, a.type)) {
      return invalid_model(pfx + "attribute '" + name + "' must be " + kind_name(kind) + ", got " +
                           attr_type_name(a.type));
    }
  }
  std::string missing;
  s.for_each_required([&](std::string_view name) {
    if (missing.empty() && !node.attr(name)) missing = std::string(name);
  });
  if (!missing.empty()) {
    return invalid_model(pfx + "required attribute '" + missing + "' is missing");
  }
  const std::string counts = check_counts(node, s);
  if (!counts.empty()) return invalid_model(pfx + counts);
  const std::string values = check_attribute_values(node);
  if (!values.empty()) return invalid_model(pfx + values);
  return ok_status();
}

}  // namespace recur
