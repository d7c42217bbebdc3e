// The allowed values of enum-like and range-limited attributes of the default domain, where
// ONNX's operator documentation defines them. Types are checked before these rules run.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>

#include "runtime/engine/onnx/schema_check.h"

namespace recur {

namespace {

enum class Rule {
  kOneOf,          // an int or string among `values` (see allowed_list)
  kPositiveInt,    // an int > 0
  kPositiveFloat,  // a float > 0
  kActivations,    // the RNN family's activation names and their count
};

struct ValueRule {
  const char* ops;  // op types separated by '|'
  const char* attr;
  Rule rule;
  std::vector<const char*> values;
};

const std::vector<ValueRule>& rules() {
  static const std::vector<ValueRule> table = {
      {"LSTM|GRU|RNN", "direction", Rule::kOneOf, {"forward", "reverse", "bidirectional"}},
      {"LSTM|GRU|RNN", "layout", Rule::kOneOf, {"0", "1"}},
      {"LSTM|GRU|RNN", "hidden_size", Rule::kPositiveInt, {}},
      {"LSTM|GRU|RNN", "clip", Rule::kPositiveFloat, {}},
      {"LSTM|GRU|RNN", "activations", Rule::kActivations, {}},
      {"LSTM", "input_forget", Rule::kOneOf, {"0", "1"}},
      {"GRU", "linear_before_reset", Rule::kOneOf, {"0", "1"}},
      {"Pad", "mode", Rule::kOneOf, {"constant", "reflect", "edge", "wrap@19"}},
      // Resize-10 knew only nearest and linear; the other attributes came with Resize-11.
      {"Resize", "mode", Rule::kOneOf, {"nearest", "linear", "cubic@11"}},
      {"Resize",
       "coordinate_transformation_mode",
       Rule::kOneOf,
       {"half_pixel", "half_pixel_symmetric@19", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nn@11-12", "tf_crop_and_resize"}},
      {"Resize",
       "nearest_mode",
       Rule::kOneOf,
       {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}},
      {"Resize",
       "keep_aspect_ratio_policy",
       Rule::kOneOf,
       {"stretch", "not_larger", "not_smaller"}},
      {"Resize", "exclude_outside", Rule::kOneOf, {"0", "1"}},
      {"Resize", "antialias", Rule::kOneOf, {"0", "1"}},
      {"DepthToSpace", "mode", Rule::kOneOf, {"DCR", "CRD"}},
      {"ScatterElements|ScatterND",
       "reduction",
       Rule::kOneOf,
       {"none", "add", "mul", "max@18", "min@18"}},
      {"Gelu", "approximate", Rule::kOneOf, {"none", "tanh"}},
      {"Conv|ConvTranspose|AveragePool|MaxPool|LpPool",
       "auto_pad",
       Rule::kOneOf,
       {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}},
  };
  return table;
}

bool names_op(const char* ops, const std::string& op) {
  const std::string_view all(ops);
  size_t start = 0;
  while (start <= all.size()) {
    const size_t end = std::min(all.find('|', start), all.size());
    if (all.substr(start, end - start) == op) return true;
    start = end + 1;
  }
  return false;
}

// "'a', 'b' or 'c'" (quoted for strings), the values allowed at `opset`: "v@N" is allowed from
// opset N on, "v@N-M" from N to M.
std::string allowed_list(const ValueRule& r, int opset, bool quoted, std::vector<std::string>* ok) {
  for (const char* v : r.values) {
    std::string s(v);
    const size_t at = s.find('@');
    if (at != std::string::npos) {
      char* end = nullptr;
      const long first = std::strtol(s.c_str() + at + 1, &end, 10);
      const long last = *end == '-' ? std::strtol(end + 1, nullptr, 10) : INT_MAX;
      if (opset < first || opset > last) continue;
      s.resize(at);
    }
    ok->push_back(s);
  }
  std::string text;
  for (size_t i = 0; i < ok->size(); ++i) {
    if (i > 0) text += i + 1 == ok->size() ? " or " : ", ";
    text += quoted ? "'" + (*ok)[i] + "'" : (*ok)[i];
  }
  return text;
}

std::string check_one_of(const ValueRule& r, const Attribute& a, int opset) {
  const bool is_string = a.type == AttrType::kString;
  if (!is_string && a.type != AttrType::kInt) return "";
  std::vector<std::string> ok;
  const std::string list = allowed_list(r, opset, is_string, &ok);
  const std::string got = is_string ? a.s : std::to_string(a.i);
  if (std::find(ok.begin(), ok.end(), got) != ok.end()) return "";
  std::string later;
  for (const char* v : r.values) {
    const std::string_view sv(v);
    const size_t at = sv.find('@');
    if (at != std::string_view::npos && sv.substr(0, at) == got && opset < std::atoi(v + at + 1)) {
      later = ", which needs opset " + std::string(sv.substr(at + 1, sv.find('-', at) - at - 1));
    }
  }
  return "must be " + list + ", got " + (is_string ? "'" + got + "'" : got) + later;
}

// The activation functions ONNX lists for its RNN operators. Matched without regard to case,
// as the RNN kernels do.
constexpr const char* kRnnActivations[] = {
    "Relu",       "Tanh",        "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
    "ScaledTanh", "HardSigmoid", "Elu",     "Softsign", "Softplus"};

bool same_name(const std::string& a, const char* b) {
  const std::string_view bv(b);
  return a.size() == bv.size() && std::equal(a.begin(), a.end(), bv.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string check_activations(const Node& node, const Attribute& a) {
  if (a.type != AttrType::kStrings) return "";
  for (const std::string& name : a.strings) {
    const bool known = std::any_of(std::begin(kRnnActivations), std::end(kRnnActivations),
                                   [&](const char* k) { return same_name(name, k); });
    if (!known) return "lists the unknown activation '" + name + "'";
  }
  const int per_dir = node.op_type == "LSTM" ? 3 : node.op_type == "GRU" ? 2 : 1;
  const Attribute* dir = node.attr("direction");
  const bool bidi = dir && dir->type == AttrType::kString && dir->s == "bidirectional";
  const size_t n = a.strings.size();
  // One set for a bidirectional node serves both directions, as the kernels read it.
  if (n == static_cast<size_t>(per_dir) || (bidi && n == static_cast<size_t>(2 * per_dir))) {
    return "";
  }
  return "lists " + std::to_string(n) + " functions; " +
         (bidi ? "a bidirectional " : "a single-direction ") + node.op_type + " takes " +
         std::to_string(per_dir) + (bidi ? " or " + std::to_string(2 * per_dir) : "");
}

std::string check_rule(const ValueRule& r, const Node& node, const Attribute& a) {
  switch (r.rule) {
    case Rule::kOneOf:
      return check_one_of(r, a, node.opset);
    case Rule::kPositiveInt:
      if (a.type == AttrType::kInt && a.i <= 0)
        return "must be positive, got " + std::to_string(a.i);
      return "";
    case Rule::kPositiveFloat:
      if (a.type == AttrType::kFloat && !(a.f > 0.0f)) {
        return "must be positive, got " + std::to_string(a.f);
      }
      return "";
    case Rule::kActivations:
      return check_activations(node, a);
  }
  return "";
}

}  // namespace

std::string check_attribute_values(const Node& node) {
  if (!node.domain.empty()) return "";
  for (const ValueRule& r : rules()) {
    if (!names_op(r.ops, node.op_type)) continue;
    const Attribute* a = node.attr(r.attr);
    if (!a) continue;
    const std::string why = check_rule(r, node, *a);
    if (!why.empty()) return "attribute '" + std::string(r.attr) + "' " + why;
  }
  return "";
}

}  // namespace recur
