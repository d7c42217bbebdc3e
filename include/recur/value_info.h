// What a model declares about a value: name, type and shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recur/dtype.h"
#include "recur/export.h"

namespace recur {

// One dimension of a declared shape: a number, a symbol such as "batch", or unknown.
struct Dim {
  int64_t value = -1;  // -1 when not a fixed number
  std::string symbol;  // the dim_param, if any
  bool is_fixed() const { return value >= 0; }
};

struct RECUR_API ValueInfo {
  std::string name;
  DType dtype = DType::kUndefined;          // kSequence for an ONNX sequence, kMap for a map
  std::optional<std::vector<Dim>> shape;    // nullopt when the rank is unknown
  DType element_dtype = DType::kUndefined;  // a sequence's tensor type (kMap for maps)
  // The key and value types of a map, or of a sequence's maps; kUndefined otherwise.
  DType map_key_dtype = DType::kUndefined;
  DType map_value_dtype = DType::kUndefined;
  bool optional = false;             // an ONNX optional: Tensor::none() may be fed or returned
  bool has_default = false;          // an input backed by an initializer: optional to feed
  std::string shape_string() const;  // "[batch,16,64]", or "?" for an unknown rank
};

}  // namespace recur
