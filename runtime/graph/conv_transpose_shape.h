// ConvTranspose's geometry, shared by every provider's kernel so that they agree on the output
// size and paddings: ONNX's output_padding, output_shape and auto_pad rules, resolved against
// concrete X and W shapes.
#pragma once

#include <string>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur {

// The attributes as the node gives them (empty where left out).
struct ConvTransposeAttrs {
  std::string auto_pad = "NOTSET";
  Shape kernel_shape, strides, dilations, pads, output_padding, output_shape;
  int64_t group = 1;
  static Result<ConvTransposeAttrs> read(const Node& node);
};

// One resolved ConvTranspose. Along each spatial axis i the full (unpadded) output has
// stride * (x - 1) + output_padding + (kernel - 1) * dilation + 1 positions; Y keeps those from
// pad_begin on and drops pad_end at the end. A pad may be negative where output_shape asks for
// more than the full output: those positions receive only the bias.
struct ConvTransposeShape {
  int64_t n = 0, c = 0, m = 0;  // batch, input channels, output channels
  Shape kernel, stride, dilation, output_padding, pad_begin, pad_end;
  Shape x_spatial, y_spatial;
  Shape y;  // [n, m, y_spatial...]
};

// Errors name what is wrong; the caller prefixes the node.
Result<ConvTransposeShape> resolve_conv_transpose(const ConvTransposeAttrs& a, const Shape& x,
                                                  const Shape& w);

}  // namespace recur
