// Sliding-window geometry shared by Conv and pooling: output sizes and the paddings oneDNN
// needs, from ONNX's auto_pad, pads, strides, dilations and ceil_mode.
#pragma once

#include <string>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur::onednn {

struct WindowAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel, strides, dilations, pads;  // empty where the model left it out
  bool ceil_mode = false;
  // Reads the attributes of `node`; kernel_shape is optional (Conv takes it from W).
  static Result<WindowAttrs> read(const Node& node);
};

struct Window {
  std::vector<int64_t> kernel, strides, dilations;  // dilations as ONNX counts them (1 = none)
  std::vector<int64_t> pad_l, pad_r;  // pad_r such that oneDNN's floor formula gives `out`
  std::vector<int64_t> out;
};

// `in` and `kernel` are the spatial sizes. Errors name what is wrong; the caller prefixes the
// node.
Result<Window> compute_window(const WindowAttrs& a, const std::vector<int64_t>& in,
                              const std::vector<int64_t>& kernel);

}  // namespace recur::onednn
