// Node attributes, as ONNX defines them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "recur/tensor.h"

namespace recur {

class Graph;
struct TypeInfo;

enum class AttrType {
  kUndefined,
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
  kType,  // a TypeProto (the Optional operator's `type`)
};
const char* attr_type_name(AttrType t);

struct Attribute {
  AttrType type = AttrType::kUndefined;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::shared_ptr<const TypeInfo> type_info;
};

}  // namespace recur
