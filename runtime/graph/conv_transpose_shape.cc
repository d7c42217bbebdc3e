#include "runtime/graph/conv_transpose_shape.h"

namespace recur {

namespace {

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

}  // namespace

Result<ConvTransposeAttrs> ConvTransposeAttrs::read(const Node& node) {
  ConvTransposeAttrs a;
  AttrReader r(node);
  a.auto_pad = r.get_string("auto_pad", "NOTSET");
  a.kernel_shape = r.get_ints("kernel_shape");
  a.strides = r.get_ints("strides");
  a.dilations = r.get_ints("dilations");
  a.pads = r.get_ints("pads");
  a.output_padding = r.get_ints("output_padding");
  a.output_shape = r.get_ints("output_shape");
  a.group = r.get_int("group", 1);
  RECUR_RETURN_IF_ERROR(r.status());
  if (a.auto_pad.empty()) a.auto_pad = "NOTSET";
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" &&
      a.auto_pad != "SAME_LOWER") {
    return invalid_model(node.describe() + ": unknown auto_pad '" + a.auto_pad + "'");
  }
  if (a.group <= 0) return invalid_model(node.describe() + ": group must be positive");
  return a;
}

Result<ConvTransposeShape> resolve_conv_transpose(const ConvTransposeAttrs& a, const Shape& x,
                                                  const Shape& w) {
  if (x.size() < 3) {
    return invalid_argument("X must have rank >= 3 ([N, C, spatial...]), got " +
                            shape_to_string(x));
  }
  if (w.size() != x.size()) {
    return invalid_argument("W " + shape_to_string(w) + " must have the rank of X " +
                            shape_to_string(x));
  }
  const size_t r = x.size() - 2;
  const int64_t g = a.group;
  if (g <= 0) return invalid_argument("group must be positive");
  ConvTransposeShape s;
  s.n = x[0];
  s.c = x[1];
  if (s.c % g != 0) {
    return invalid_argument("input channels " + std::to_string(s.c) +
                            " are not divisible by group " + std::to_string(g));
  }
  if (w[0] != s.c) {
    return invalid_argument("W " + shape_to_string(w) + " should have " + std::to_string(s.c) +
                            " input channels, as X " + shape_to_string(x) + " has");
  }
  constexpr int64_t kMax = int64_t{1} << 31;
  if (w[1] > kMax) return invalid_argument("W " + shape_to_string(w) + " is too large");
  s.m = w[1] * g;
  s.kernel.assign(w.begin() + 2, w.end());
  if (!a.kernel_shape.empty() && a.kernel_shape != s.kernel) {
    return invalid_argument("kernel_shape does not match the weights " + shape_to_string(w));
  }
  auto len_ok = [&](const Shape& v, size_t n) { return v.empty() || v.size() == n; };
  if (!len_ok(a.strides, r) || !len_ok(a.dilations, r) || !len_ok(a.output_padding, r) ||
      (a.auto_pad == "NOTSET" && !len_ok(a.pads, 2 * r))) {
    return invalid_argument(
        "strides, dilations, output_padding or pads have the wrong length for " +
        std::to_string(r) + " spatial dimensions");
  }
  Shape out_shape;
  if (!a.output_shape.empty()) {
    if (a.output_shape.size() < r) {
      return invalid_argument("output_shape has fewer values than spatial dimensions");
    }
    out_shape.assign(a.output_shape.end() - static_cast<std::ptrdiff_t>(r), a.output_shape.end());
  }
  s.stride = a.strides.empty() ? Shape(r, 1) : a.strides;
  s.dilation = a.dilations.empty() ? Shape(r, 1) : a.dilations;
  s.output_padding = a.output_padding.empty() ? Shape(r, 0) : a.output_padding;
  s.x_spatial.assign(x.begin() + 2, x.end());
  s.y_spatial.assign(r, 0);
  s.pad_begin.assign(r, 0);
  s.pad_end.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t k = s.kernel[i], st = s.stride[i], d = s.dilation[i], in = s.x_spatial[i];
    const int64_t op = s.output_padding[i];
    if (k <= 0 || k > kMax || st <= 0 || st > kMax || d <= 0 || d > kMax || op < 0 || op > kMax ||
        in > kMax) {
      return invalid_argument(
          "kernel, strides, dilations and output_padding must be positive "
          "(output_padding non-negative)");
    }
    const int64_t ek = (k - 1) * d + 1;
    const int64_t full = st * (in - 1) + op + ek;
    if (!out_shape.empty() || a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      const int64_t want = out_shape.empty() ? in * st : out_shape[i];
      if (want <= 0 || want > kMax) {
        return invalid_argument("output_shape value " + std::to_string(want) + " is invalid");
      }
      const int64_t total = full - want;
      if (a.auto_pad == "SAME_UPPER") {
        s.pad_begin[i] = floor_div2(total);
        s.pad_end[i] = total - floor_div2(total);
      } else {
        s.pad_begin[i] = total - floor_div2(total);
        s.pad_end[i] = floor_div2(total);
      }
      s.y_spatial[i] = want;
    } else {
      if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
        s.pad_begin[i] = a.pads[i];
        s.pad_end[i] = a.pads[i + r];
      }
      if (s.pad_begin[i] < 0 || s.pad_end[i] < 0 || s.pad_begin[i] > kMax || s.pad_end[i] > kMax) {
        return invalid_argument("pads must be non-negative");
      }
      s.y_spatial[i] = full - s.pad_begin[i] - s.pad_end[i];
      if (s.y_spatial[i] <= 0) {
        return invalid_argument("pads leave no output along spatial dimension " +
                                std::to_string(i));
      }
    }
  }
  s.y = {s.n, s.m};
  s.y.insert(s.y.end(), s.y_spatial.begin(), s.y_spatial.end());
  return s;
}

}  // namespace recur
