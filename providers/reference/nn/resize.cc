// Resize (opsets 10, 11, 13, 18, 19): nearest, linear and cubic interpolation over any axes,
// every coordinate_transformation_mode (tf_crop_and_resize with roi and extrapolation_value,
// half_pixel_symmetric from 19), nearest_mode, cubic_coeff_a and exclude_outside; output from
// scales or sizes. Opset 18 adds `axes` (scales, sizes and roi name only those axes),
// keep_aspect_ratio_policy for sizes, and antialias. Interpolation is separable: each axis
// contributes taps (index, weight) and an output element is the weighted sum over the product of
// its axes' taps, taken a row of the output at a time.
#include <cmath>
#include <limits>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

struct Tap {
  int64_t index;
  double weight;
};

// One axis' taps, for all its output coordinates in one array: coordinate o's are
// taps[begin[o] .. begin[o + 1]), each index already multiplied by the axis' input stride.
// Taps of weight 0 (linear at a whole coordinate, a cubic tap at a node) are left out: they
// add nothing, and a scale-1 axis then costs one tap instead of two or four.
struct AxisTaps {
  std::vector<Tap> taps;
  std::vector<size_t> begin;  // out + 1 entries
  std::vector<char> outside;  // tf_crop_and_resize: extrapolate
};

// `out` is the unrounded resized length in * scale, as the ONNX reference uses it.
double original_coordinate(const std::string& mode, double x, double scale, int64_t in, double out,
                           int64_t out_int, double roi_start, double roi_end) {
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "half_pixel_symmetric") {
    // Centres the sampled region when the output length was rounded down from in * scale.
    const double offset =
        0.5 * static_cast<double>(in) * (1.0 - static_cast<double>(out_int) / out);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") {
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out - 1);
  }
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize
  if (out > 1) {
    return roi_start * static_cast<double>(in - 1) +
           x * (roi_end - roi_start) * static_cast<double>(in - 1) / (out - 1);
  }
  return 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
}

int64_t clamp_index(int64_t i, int64_t in) { return i < 0 ? 0 : (i >= in ? in - 1 : i); }

double cubic_kernel(double A, double d) {
  d = std::fabs(d);
  if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
  if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  return 0.0;
}

// Antialiased linear or cubic taps around x = i0 + t: the filter is stretched by 1 / scale, so
// every input that falls under it contributes, and the weights are normalised to sum to 1.
void antialias_taps(const ResizeParams& p, int64_t i0, double t, double scale, int64_t in,
                    std::vector<Tap>& taps) {
  const bool cubic = p.mode == ResizeParams::Mode::kCubic;
  const double support = cubic ? 2.0 : 1.0;
  const auto start = static_cast<int64_t>(std::floor(-support / scale) + 1);
  double sum = 0;
  for (int64_t j = start; j <= 1 - start; ++j) {
    const double u = (static_cast<double>(j) - t) * scale;
    const double w = cubic ? cubic_kernel(p.cubic_a, u) : std::max(0.0, 1.0 - std::fabs(u));
    taps.push_back({i0 + j, w});
    sum += w;
  }
  if (sum != 0) {
    for (Tap& tap : taps) tap.weight /= sum;
  }
}

int64_t nearest_index(const std::string& mode, double x, bool downsampling) {
  const double fl = std::floor(x);
  const double frac = x - fl;
  if (mode == "simple") return static_cast<int64_t>(downsampling ? std::ceil(x) : fl);
  if (mode == "floor") return static_cast<int64_t>(fl);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (frac == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? fl + 1 : fl);
  return static_cast<int64_t>(frac < 0.5 ? fl : fl + 1);
}

// exclude_outside drops the taps that fall outside the input and renormalises the rest;
// otherwise the input is edge-padded.
void exclude_or_clamp(const ResizeParams& p, int64_t in, std::vector<Tap>& taps) {
  if (!p.exclude_outside) {
    for (Tap& tap : taps) tap.index = clamp_index(tap.index, in);
    return;
  }
  double sum = 0;
  std::erase_if(taps, [in](const Tap& tap) { return tap.index < 0 || tap.index >= in; });
  for (const Tap& tap : taps) sum += tap.weight;
  if (sum != 0) {
    for (Tap& tap : taps) tap.weight /= sum;
  }
}

AxisTaps axis_taps(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start,
                   double roi_end, int64_t stride) {
  AxisTaps a;
  a.begin.reserve(static_cast<size_t>(out) + 1);
  a.outside.assign(static_cast<size_t>(out), 0);
  const bool crop = p.coordinate_mode == "tf_crop_and_resize";
  std::vector<Tap> taps;
  for (int64_t o = 0; o < out; ++o) {
    a.begin.push_back(a.taps.size());
    taps.clear();
    const double x = original_coordinate(p.coordinate_mode, static_cast<double>(o), scale, in,
                                         static_cast<double>(in) * scale, out, roi_start, roi_end);
    if (!std::isfinite(x) || (crop && (x < 0 || x > static_cast<double>(in - 1)))) {
      // Only a corrupt roi gives a non-finite coordinate: extrapolate rather than index.
      a.outside[static_cast<size_t>(o)] = 1;
      continue;
    }
    if (p.mode == ResizeParams::Mode::kNearest) {
      taps.push_back({clamp_index(nearest_index(p.nearest_mode, x, scale < 1.0), in), 1.0});
    } else {
      const double fl = std::floor(x);
      const double t = x - fl;
      const auto i0 = static_cast<int64_t>(fl);
      if (p.antialias && scale < 1.0) {
        antialias_taps(p, i0, t, scale, in, taps);
      } else if (p.mode == ResizeParams::Mode::kLinear) {
        taps.push_back({i0, 1.0 - t});
        taps.push_back({i0 + 1, t});
      } else {
        for (int64_t k = -1; k <= 2; ++k) {
          taps.push_back({i0 + k, cubic_kernel(p.cubic_a, static_cast<double>(k) - t)});
        }
      }
      exclude_or_clamp(p, in, taps);
    }
    for (const Tap& tap : taps)
      if (tap.weight != 0) a.taps.push_back({tap.index * stride, tap.weight});
  }
  a.begin.push_back(a.taps.size());
  return a;
}

}  // namespace

Result<Shape> resize_shape_from_scales(const Shape& in, const std::vector<double>& scales) {
  if (scales.size() != in.size()) {
    return invalid_argument("scales has " + std::to_string(scales.size()) +
                            " values for an input of rank " + std::to_string(in.size()));
  }
  Shape out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (!(scales[i] > 0) || !std::isfinite(scales[i])) {
      return invalid_argument("scale " + std::to_string(scales[i]) + " must be positive");
    }
    const double v = std::floor(static_cast<double>(in[i]) * scales[i]);
    if (v > static_cast<double>(kMaxOutputElements)) {
      return invalid_argument("scale " + std::to_string(scales[i]) + " gives a huge output");
    }
    out[i] = static_cast<int64_t>(v);
  }
  RECUR_RETURN_IF_ERROR(checked_numel(out, "the output shape").status());
  return out;
}

Status resize_into(KernelContext& ctx, const ResizeParams& p, const Tensor& x,
                   const std::vector<double>& scales, const Shape& out,
                   const std::vector<double>& roi) {
  const size_t r = out.size();
  RECUR_RETURN_IF_ERROR(checked_numel(out, "the output shape").status());
  if (!roi.empty() && roi.size() != 2 * r) {
    return invalid_argument("roi has " + std::to_string(roi.size()) + " values, expected " +
                            std::to_string(2 * r));
  }
  for (size_t d = 0; d < r; ++d) {
    if (x.dim(static_cast<int64_t>(d)) == 0 && out[d] > 0) {
      return invalid_argument("cannot resize an empty dimension to " + std::to_string(out[d]));
    }
  }
  // The output first: its allocation meets the run's memory limit, and an empty one needs no
  // taps. The taps are a list per output index of each axis, larger than that axis of the
  // output: an Upsample to [0, 1, 402653184, 12] built 9.6 GB of taps for an empty output
  // (found by the model fuzzer).
  RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out));
  if (y->numel() == 0) return ok_status();
  const Shape in_stride = contiguous_strides(x.shape());
  std::vector<AxisTaps> axes(r);
  for (size_t d = 0; d < r; ++d) {
    const double rs = roi.empty() ? 0.0 : roi[d], re = roi.empty() ? 1.0 : roi[d + r];
    axes[d] = axis_taps(p, x.dim(static_cast<int64_t>(d)), out[d], scales[d], rs, re, in_stride[d]);
  }
  const bool handled = visit_dtype(kNumericTypes, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* xp = x.data<T>();
    T* yp = y->data<T>();
    auto store = [&](int64_t i, double v) {
      if constexpr (std::is_integral_v<T>) {
        v = std::nearbyint(v);
        const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<T>::max());
        yp[i] = static_cast<T>(v < lo ? lo : (v > hi ? hi : v));
      } else {
        yp[i] = static_cast<T>(static_cast<C>(v));
      }
    };
    if (r == 0) {  // a scalar resizes to itself
      store(0, static_cast<double>(static_cast<C>(xp[0])));
      return;
    }
    // A row of the output (every axis but the last fixed) at a time: the products of the
    // other axes' taps are made once for the row, in the order the sum takes them (the first
    // axis slowest), and each output element of the row sums them against its last-axis taps.
    const AxisTaps& last = axes[r - 1];
    const int64_t row_len = out[r - 1];
    const int64_t rows = shape_numel(out) / row_len;
    std::vector<int64_t> o(r - 1, 0);
    std::vector<Tap> combos, next;
    for (int64_t row = 0; row < rows; ++row) {
      bool outside = false;
      combos.assign(1, Tap{0, 1.0});
      for (size_t d = 0; d + 1 < r; ++d) {
        const auto od = static_cast<size_t>(o[d]);
        outside |= axes[d].outside[od] != 0;
        next.clear();
        for (const Tap& c : combos)
          for (size_t k = axes[d].begin[od]; k < axes[d].begin[od + 1]; ++k)
            next.push_back({c.index + axes[d].taps[k].index, c.weight * axes[d].taps[k].weight});
        combos.swap(next);
      }
      for (int64_t j = 0; j < row_len; ++j) {
        const auto oj = static_cast<size_t>(j);
        double v = 0;
        if (outside || last.outside[oj] != 0) {
          v = p.extrapolation_value;
        } else {
          for (const Tap& c : combos)
            for (size_t k = last.begin[oj]; k < last.begin[oj + 1]; ++k) {
              const double w = c.weight * last.taps[k].weight;
              if (w != 0)
                v += w * static_cast<double>(static_cast<C>(xp[c.index + last.taps[k].index]));
            }
        }
        store(row * row_len + j, v);
      }
      for (size_t d = r - 1; d-- > 0;) {
        if (++o[d] < out[d]) break;
        o[d] = 0;
      }
    }
  });
  if (!handled) return not_implemented("dtype " + dtype_str(x.dtype()) + " is not supported");
  return ok_status();
}

namespace {

Result<std::vector<double>> read_float_values(const Tensor& t, const std::string& what) {
  if (t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat64 ||
      t.dtype() == DType::kFloat16) {
    return read_as_double(t, what);
  }
  return invalid_argument(what + " must be a float tensor, not " + dtype_str(t.dtype()));
}

struct ResizeTarget {
  std::vector<double> scales;  // per axis of the input
  Shape out;
  std::vector<double> roi;  // [starts..., ends...] over every axis, or empty
};

struct ResizeOptions {
  std::vector<int64_t> axes;  // normalised; every axis when the node has none
  std::string aspect_policy = "stretch";
};

// Spreads values given for `axes` over every axis of rank r, `fill` elsewhere.
template <typename T>
std::vector<T> over_all_axes(const std::vector<T>& v, const std::vector<int64_t>& axes, size_t r,
                             const std::vector<T>& fill) {
  std::vector<T> all = fill;
  for (size_t i = 0; i < axes.size(); ++i) all[static_cast<size_t>(axes[i])] = v[i];
  return all;
}

Result<ResizeTarget> resize_target(const Shape& in, const std::vector<double>* scales,
                                   const std::vector<int64_t>* sizes, std::vector<double> roi,
                                   const ResizeOptions& o) {
  const size_t r = in.size(), k = o.axes.size();
  const size_t given = scales ? scales->size() : sizes->size();
  if (given != k) {
    return invalid_argument(std::string(scales ? "scales" : "sizes") + " has " +
                            std::to_string(given) + " values for an input of rank " +
                            std::to_string(r) + " and " + std::to_string(k) + " resized axes");
  }
  ResizeTarget t;
  if (!roi.empty()) {
    if (roi.size() != 2 * k) {
      return invalid_argument("roi has " + std::to_string(roi.size()) + " values, expected " +
                              std::to_string(2 * k));
    }
    std::vector<double> starts(roi.begin(), roi.begin() + static_cast<std::ptrdiff_t>(k));
    std::vector<double> ends(roi.begin() + static_cast<std::ptrdiff_t>(k), roi.end());
    t.roi = over_all_axes(starts, o.axes, r, std::vector<double>(r, 0.0));
    const auto e = over_all_axes(ends, o.axes, r, std::vector<double>(r, 1.0));
    t.roi.insert(t.roi.end(), e.begin(), e.end());
  }
  if (scales) {
    t.scales = over_all_axes(*scales, o.axes, r, std::vector<double>(r, 1.0));
    RECUR_ASSIGN_OR_RETURN(t.out, resize_shape_from_scales(in, t.scales));
    return t;
  }
  RECUR_RETURN_IF_ERROR(checked_numel(*sizes, "sizes").status());
  t.out = over_all_axes(*sizes, o.axes, r, in.to_vector());
  for (size_t d = 0; d < r; ++d) {
    t.scales.push_back(in[d] > 0 ? static_cast<double>(t.out[d]) / static_cast<double>(in[d])
                                 : 1.0);
  }
  if (o.aspect_policy == "stretch") return t;
  // One scale for every named axis, the smallest or largest of theirs; lengths round half up.
  double s = t.scales[static_cast<size_t>(o.axes[0])];
  for (int64_t a : o.axes) {
    const double v = t.scales[static_cast<size_t>(a)];
    s = o.aspect_policy == "not_larger" ? std::min(s, v) : std::max(s, v);
  }
  for (int64_t a : o.axes) {
    t.scales[static_cast<size_t>(a)] = s;
    t.out[static_cast<size_t>(a)] =
        static_cast<int64_t>(std::floor(s * static_cast<double>(in[static_cast<size_t>(a)]) + 0.5));
  }
  RECUR_RETURN_IF_ERROR(checked_numel(t.out, "the output shape").status());
  return t;
}

Result<std::vector<int64_t>> normalized_axes(const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (size_t i = 0; i < rank; ++i) out.push_back(static_cast<int64_t>(i));
    return out;
  }
  const auto r = static_cast<int64_t>(rank);
  std::vector<char> seen(rank, 0);
  for (int64_t a : axes) {
    if (a < -r || a >= r || seen[static_cast<size_t>(a < 0 ? a + r : a)]) {
      return invalid_argument("axis " + std::to_string(a) + " is out of range or repeated");
    }
    out.push_back(a < 0 ? a + r : a);
    seen[static_cast<size_t>(out.back())] = 1;
  }
  return out;
}

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(ResizeParams p, std::vector<int64_t> axes, std::string policy)
      : p_(std::move(p)), axes_(std::move(axes)), policy_(std::move(policy)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const int opset = ctx.node().opset;
    // Opset 10: (X, scales). Opset 11+: (X, roi, scales, sizes).
    const Tensor* roi_t = opset >= 11 ? ctx.input(1) : nullptr;
    const Tensor* scales_t = ctx.input(opset >= 11 ? 2 : 1);
    const Tensor* sizes_t = opset >= 11 ? ctx.input(3) : nullptr;
    if (scales_t && scales_t->numel() == 0) scales_t = nullptr;
    if (sizes_t && sizes_t->numel() == 0) sizes_t = nullptr;
    if ((scales_t != nullptr) == (sizes_t != nullptr)) {
      return invalid_argument("exactly one of scales and sizes must be given");
    }
    std::vector<double> roi;
    if (roi_t && roi_t->numel() > 0 && p_.coordinate_mode == "tf_crop_and_resize") {
      RECUR_ASSIGN_OR_RETURN(roi, read_float_values(*roi_t, "roi"));
    }
    ResizeOptions o{.aspect_policy = policy_};
    RECUR_ASSIGN_OR_RETURN(o.axes, normalized_axes(axes_, x->shape().size()));
    std::vector<double> scales;
    std::vector<int64_t> sizes;
    if (scales_t) {
      RECUR_ASSIGN_OR_RETURN(scales, read_float_values(*scales_t, "scales"));
    } else {
      RECUR_ASSIGN_OR_RETURN(sizes, read_int_values(*sizes_t, "sizes"));
    }
    RECUR_ASSIGN_OR_RETURN(ResizeTarget t,
                           resize_target(x->shape(), scales_t ? &scales : nullptr,
                                         scales_t ? nullptr : &sizes, std::move(roi), o));
    return resize_into(ctx, p_, *x, t.scales, t.out, t.roi);
  }

 private:
  ResizeParams p_;
  std::vector<int64_t> axes_;
  std::string policy_;
};

Result<ResizeParams::Mode> parse_mode(const Node& node, const std::string& m, bool allow_cubic) {
  if (m == "nearest") return ResizeParams::Mode::kNearest;
  if (m == "linear" || m == "bilinear" || m == "trilinear") return ResizeParams::Mode::kLinear;
  if (m == "cubic" && allow_cubic) return ResizeParams::Mode::kCubic;
  return invalid_model(node.describe() + ": unsupported mode '" + m + "'");
}

}  // namespace

Status infer_resize_like(InferContext& ctx, size_t scales_index, size_t sizes_index,
                         const std::vector<float>& attr_scales) {
  const TypeInfo& x = ctx.input_type(0);
  TypeInfo out;
  out.dtype = x.dtype;
  if (x.has_rank()) {
    std::vector<Dim> dims(x.shape->size());
    const Tensor* sizes = sizes_index < ctx.num_inputs() && ctx.has_input(sizes_index)
                              ? ctx.input_value(sizes_index)
                              : nullptr;
    const Tensor* scales = scales_index < ctx.num_inputs() && ctx.has_input(scales_index)
                               ? ctx.input_value(scales_index)
                               : nullptr;
    std::vector<double> sc(attr_scales.begin(), attr_scales.end());
    if (sizes && sizes->numel() == static_cast<int64_t>(dims.size())) {
      auto v = read_int_values(*sizes, "sizes");
      if (v.ok()) {
        for (size_t i = 0; i < dims.size(); ++i) dims[i].value = (*v)[i] >= 0 ? (*v)[i] : -1;
      }
    } else if (scales && scales->numel() == static_cast<int64_t>(dims.size()) &&
               scales->dtype() == DType::kFloat32) {
      sc.assign(scales->data<float>(), scales->data<float>() + scales->numel());
    }
    if (sc.size() == dims.size() && x.is_static()) {
      auto s = resize_shape_from_scales(x.static_shape(), sc);
      if (s.ok()) {
        for (size_t i = 0; i < dims.size(); ++i) dims[i].value = (*s)[i];
      }
    }
    out.shape = dims;
  }
  ctx.set_output(0, out);
  return ok_status();
}

Result<ResizeParams::Mode> parse_resize_mode(const Node& node, const std::string& m,
                                             bool allow_cubic) {
  return parse_mode(node, m, allow_cubic);
}

namespace {

ResizeOptions resize_options(const Node& node, size_t rank, AttrReader& r) {
  ResizeOptions o;
  if (node.opset >= 18) {
    auto axes = normalized_axes(r.get_ints("axes"), rank);
    if (axes.ok()) o.axes = *axes;
    o.aspect_policy = r.get_string("keep_aspect_ratio_policy", "stretch");
  } else {
    for (size_t i = 0; i < rank; ++i) o.axes.push_back(static_cast<int64_t>(i));
  }
  return o;
}

// The output shape when scales or sizes are constants and X is static; otherwise only the rank,
// with the axes that Resize-18 leaves alone kept.
Status infer_resize(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  TypeInfo out;
  out.dtype = x.dtype;
  if (!x.has_rank()) {
    ctx.set_output(0, out);
    return ok_status();
  }
  AttrReader r(ctx.node());
  const ResizeOptions o = resize_options(ctx.node(), x.shape->size(), r);
  std::vector<Dim> dims = *x.shape;
  for (int64_t a : o.axes) dims[static_cast<size_t>(a)] = Dim{};
  const size_t si = ctx.opset() >= 11 ? 2 : 1, zi = 3;
  const Tensor* scales = si < ctx.num_inputs() && ctx.has_input(si) ? ctx.input_value(si) : nullptr;
  const Tensor* sizes = zi < ctx.num_inputs() && ctx.has_input(zi) ? ctx.input_value(zi) : nullptr;
  if (scales && scales->numel() == 0) scales = nullptr;
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if (x.is_static() && (scales != nullptr) != (sizes != nullptr)) {
    std::vector<double> sc;
    std::vector<int64_t> sz;
    bool read = true;
    if (scales) {
      auto v = read_float_values(*scales, "scales");
      read = v.ok();
      if (read) sc = *v;
    } else {
      auto v = read_int_values(*sizes, "sizes");
      read = v.ok();
      if (read) sz = *v;
    }
    auto t = read ? resize_target(x.static_shape(), scales ? &sc : nullptr, scales ? nullptr : &sz,
                                  {}, o)
                  : Result<ResizeTarget>(invalid_argument("unread"));
    if (t.ok()) {
      for (size_t i = 0; i < dims.size(); ++i) dims[i].value = t->out[i];
    }
  }
  out.shape = dims;
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_resize(Registrar& r) {
  r.add({.op_type = "Resize",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           ResizeParams p;
           const std::string mode = r.get_string("mode", "nearest");
           if (ctx.opset() >= 11) {
             p.coordinate_mode = r.get_string("coordinate_transformation_mode", "half_pixel");
             p.nearest_mode = r.get_string("nearest_mode", "round_prefer_floor");
             p.cubic_a = r.get_float("cubic_coeff_a", -0.75f);
             p.exclude_outside = r.get_int("exclude_outside", 0) != 0;
             p.extrapolation_value = r.get_float("extrapolation_value", 0.0f);
           } else {
             p.coordinate_mode = "asymmetric";
             p.nearest_mode = "simple";
           }
           std::vector<int64_t> axes;
           std::string policy = "stretch";
           if (ctx.opset() >= 18) {
             p.antialias = r.get_int("antialias", 0) != 0;
             axes = r.get_ints("axes");
             policy = r.get_string("keep_aspect_ratio_policy", "stretch");
           }
           RECUR_RETURN_IF_ERROR(r.status());
           RECUR_ASSIGN_OR_RETURN(p.mode, parse_mode(ctx.node(), mode, ctx.opset() >= 11));
           if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
             return ctx.error(ErrorCode::kInvalidModel,
                              "unsupported keep_aspect_ratio_policy '" + policy + "'");
           }
           static const char* kCoord[] = {
               "half_pixel",           "pytorch_half_pixel", "align_corners",       "asymmetric",
               "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
           bool known = false;
           for (const char* c : kCoord) known |= p.coordinate_mode == c;
           if (!known || (p.coordinate_mode == "tf_half_pixel_for_nn" && ctx.opset() >= 13) ||
               (p.coordinate_mode == "half_pixel_symmetric" && ctx.opset() < 19)) {
             return ctx.error(
                 ErrorCode::kInvalidModel,
                 "unsupported coordinate_transformation_mode '" + p.coordinate_mode + "'");
           }
           if (p.nearest_mode != "round_prefer_floor" && p.nearest_mode != "round_prefer_ceil" &&
               p.nearest_mode != "floor" && p.nearest_mode != "ceil" &&
               p.nearest_mode != "simple") {
             return ctx.error(ErrorCode::kInvalidModel,
                              "unsupported nearest_mode '" + p.nearest_mode + "'");
           }
           return std::make_unique<ResizeKernel>(std::move(p), std::move(axes), std::move(policy));
         }},
        infer_resize);
}

}  // namespace recur::reference
