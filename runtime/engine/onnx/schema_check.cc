#include "runtime/engine/onnx/schema_check.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <string_view>

namespace recur {

namespace {

// An ONNX attribute type; a sparse tensor is read into a dense AttrType::kTensor.
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

// One operator version. The table is constant-initialised, so that the first model loaded in a
// process pays nothing to build it (libonnx's registry cost about 6 ms there).
struct SchemaEntry {
  const char* domain;
  const char* op;
  int since;
  bool deprecated;
  int min_in, max_in, min_out, max_out;
  int first_attr, attr_count;
};

#include "runtime/engine/onnx/schema_table.inc"

constexpr bool entry_less(const SchemaEntry& a, const SchemaEntry& b) {
  const std::string_view ad(a.domain), bd(b.domain), ao(a.op), bo(b.op);
  if (ad != bd) return ad < bd;
  if (ao != bo) return ao < bo;
  return a.since < b.since;
}

// find_schema's binary search depends on this order, which the generator promises.
static_assert(std::is_sorted(std::begin(kSchemas), std::end(kSchemas), entry_less));

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
      return have == AttrType::kTensor;  // the loader holds sparse tensors dense
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

// One operator version's schema, or none.
struct Schema {
  const SchemaEntry* e = nullptr;

  bool found() const { return e != nullptr; }
  bool deprecated() const { return e->deprecated; }
  int min_in() const { return e->min_in; }
  int max_in() const { return e->max_in; }
  int min_out() const { return e->min_out; }
  int max_out() const { return e->max_out; }
  const AttrSpec* attrs_begin() const { return kSchemaAttrs + e->first_attr; }
  const AttrSpec* attrs_end() const { return attrs_begin() + e->attr_count; }
  // The attribute's declared type; false if the schema has none by that name.
  bool attribute(const std::string& name, AttrKind* kind) const {
    for (const AttrSpec* a = attrs_begin(); a != attrs_end(); ++a) {
      if (name == a->name) {
        *kind = a->kind;
        return true;
      }
    }
    return false;
  }
  template <typename F>
  void for_each_required(F f) const {
    for (const AttrSpec* a = attrs_begin(); a != attrs_end(); ++a)
      if (a->required) f(std::string_view(a->name));
  }
};

// The operator's version with the highest since_version at or below `opset`, as ONNX's
// registry resolves it.
Schema find_schema(const std::string& domain, const std::string& op, int opset) {
  Schema s;
  if (!domain.empty() && domain != "ai.onnx.ml" && domain != "com.microsoft" &&
      domain != "com.microsoft.nchwc") {
    return s;
  }
  // The first entry after (domain, op, opset); the one before it is the answer if it is an
  // entry of the same operator.
  const SchemaEntry key{domain.c_str(), op.c_str(), opset, false, 0, 0, 0, 0, 0, 0};
  const SchemaEntry* it =
      std::upper_bound(std::begin(kSchemas), std::end(kSchemas), key,
                       [](const SchemaEntry& a, const SchemaEntry& b) { return entry_less(a, b); });
  if (it == std::begin(kSchemas)) return s;
  --it;
  if (domain == it->domain && op == it->op) s.e = it;
  return s;
}

// The first opset after the node's whose version of the operator declares `attr`, or 0: an
// attribute from the future says which opset the model should import.
int later_opset_with(const Node& node, const std::string& attr) {
  const int last = node.domain.empty()                    ? kMaxOnnxOpset
                   : node.domain == "com.microsoft"       ? kMaxMicrosoftOpset
                   : node.domain == "com.microsoft.nchwc" ? 1
                                                          : kMaxMlOpset;
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

int schema_since_version(const std::string& domain, const std::string& op, int opset) {
  const Schema s = find_schema(domain, op, opset);
  return s.found() ? s.e->since : 0;
}

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
