// GridSample (opsets 16, 20, 22): samples X [N, C, D1, ..., Dk] at the normalised positions of
// grid [N, O1, ..., Ok, k] (the last grid axis lists the coordinates innermost first: x, y, z);
// linear, nearest or cubic, with zeros, border or reflection padding. Opset 16 is 4-D only and
// names the modes bilinear and bicubic; opset 20 makes the op N-D and renames them.
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

enum class GridMode { kLinear, kNearest, kCubic };
enum class GridPadding { kZeros, kBorder, kReflection };

// Reflects x at lo and hi until it lies in [lo, hi].
double reflect(double x, double lo, double hi) {
  const double span = hi - lo;
  if (!(span > 0)) return lo;
  if (x >= lo && x <= hi) return x;
  const double d = x < lo ? lo - x : x - hi;
  const double flips = std::floor(d / span);
  const double rest = d - flips * span;
  const bool even = std::fmod(flips, 2.0) == 0;
  if (x < lo) return even ? lo + rest : hi - rest;
  return even ? hi - rest : lo + rest;
}

void cubic_coeffs(double t, double* c) {
  constexpr double A = -0.75;
  auto near = [](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
  auto far = [](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
  c[0] = far(t + 1);
  c[1] = near(t);
  c[2] = near(1 - t);
  c[3] = far(2 - t);
}

struct GridTap {
  int64_t index;  // -1: outside the input under zeros padding
  double weight;
};
// One axis's taps: 1 (nearest), 2 (linear) or 4 (cubic).
struct AxisTaps {
  GridTap tap[4];
  int count = 0;
  void add(int64_t index, double weight) { tap[count++] = {index, weight}; }
};
// One output point's term: the input element at `offset` (within a plane) times `weight`.
struct PlaneTerm {
  int64_t offset;
  double weight;
};

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GridMode mode, GridPadding padding, bool align_corners, bool only_4d)
      : mode_(mode), padding_(padding), align_corners_(align_corners), only_4d_(only_4d) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* grid, required_input(ctx, 1));
    const int64_t r = x->rank();
    if (r < 3 || (only_4d_ && r != 4) || grid->rank() != r || grid->dim(0) != x->dim(0) ||
        grid->dim(r - 1) != r - 2) {
      return invalid_argument("X must be [N, C, D1..Dk] and grid [N, O1..Ok, k], got " +
                              shape_to_string(x->shape()) + " and " +
                              shape_to_string(grid->shape()));
    }
    const int64_t n = x->dim(0), c = x->dim(1);
    Shape in(x->shape().begin() + 2, x->shape().end());
    Shape out_shape{n, c};
    for (int64_t d = 1; d < r - 1; ++d) out_shape.push_back(grid->dim(d));
    RECUR_ASSIGN_OR_RETURN(const int64_t total, checked_numel(out_shape, "the output"));
    const int64_t plane_in = shape_numel(in), plane_out = total / std::max<int64_t>(1, n * c);
    RECUR_ASSIGN_OR_RETURN(std::vector<double> gs, read_as_double(*grid, "grid"));
    if (!visit_dtype(kNnFloatTypes, x->dtype(), [](auto) {})) {
      return invalid_argument("X has unsupported dtype " + dtype_str(x->dtype()));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      sample<T>(x->data<T>(), gs, in, n, c, plane_in, plane_out, y->data<T>());
    });
    return ok_status();
  }

 private:
  // X's values are read as doubles, and the sums rounded once into T, as everywhere in this
  // provider, without a double copy of X or Y.
  template <class T>
  void sample(const T* xs, const std::vector<double>& gs, const Shape& in, int64_t n, int64_t c,
              int64_t plane_in, int64_t plane_out, T* ys) const {
    using C = compute_t<T>;
    const size_t k = in.size();
    const Shape stride = contiguous_strides(in);
    // The output points go in blocks: each block's terms are found once, from the grid, and then
    // summed for every channel, one input plane at a time (the channels share the grid).
    constexpr int64_t kBlock = 4096;
    std::vector<AxisTaps> taps(k);
    std::vector<PlaneTerm> terms;
    std::vector<size_t> first(static_cast<size_t>(std::min(plane_out, kBlock)) + 1);
    std::vector<int> t(k);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t p0 = 0; p0 < plane_out; p0 += kBlock) {
        const int64_t pe = std::min(plane_out, p0 + kBlock);
        terms.clear();
        for (int64_t p = p0; p < pe; ++p) {
          first[static_cast<size_t>(p - p0)] = terms.size();
          const double* g = gs.data() + (b * plane_out + p) * static_cast<int64_t>(k);
          bool finite = true;
          for (size_t d = 0; d < k && finite; ++d) {
            // grid lists x (the last axis) first.
            const double v = g[k - 1 - d];
            finite = std::isfinite(v);
            if (finite) taps[d] = axis_taps(v, in[d]);
          }
          if (finite) add_terms(taps, stride, t, terms);  // else the point is 0
        }
        first[static_cast<size_t>(pe - p0)] = terms.size();
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* plane = xs + (b * c + ch) * plane_in;
          T* out = ys + (b * c + ch) * plane_out;
          for (int64_t p = p0; p < pe; ++p) {
            double v = 0;
            const auto q = static_cast<size_t>(p - p0);
            for (size_t i = first[q]; i < first[q + 1]; ++i)
              v += terms[i].weight * static_cast<double>(static_cast<C>(plane[terms[i].offset]));
            out[p] = static_cast<T>(static_cast<C>(v));
          }
        }
      }
    }
  }

  // Every combination of the axes' taps (the first axis slowest) as a term: the product of
  // the weights and the element's offset; taps outside the input and zero weights add nothing.
  static void add_terms(const std::vector<AxisTaps>& taps, const std::vector<int64_t>& stride,
                        std::vector<int>& t, std::vector<PlaneTerm>& terms) {
    const size_t k = taps.size();
    std::fill(t.begin(), t.end(), 0);
    while (true) {
      double w = 1;
      int64_t off = 0;
      bool outside = false;
      for (size_t d = 0; d < k; ++d) {
        const GridTap& tap = taps[d].tap[t[d]];
        w *= tap.weight;
        off += tap.index * stride[d];
        outside |= tap.index < 0;
      }
      if (!outside && w != 0) terms.push_back({off, w});
      size_t d = k;
      while (d-- > 0) {
        if (++t[d] < taps[d].count) break;
        t[d] = 0;
      }
      if (d == static_cast<size_t>(-1)) return;
    }
  }

  // The taps along one axis of length `size` for the normalised coordinate g: the coordinate
  // is padded first, then each tap index on its own, as PyTorch does.
  AxisTaps axis_taps(double g, int64_t size) const {
    const double len = static_cast<double>(size);
    double v = align_corners_ ? (g + 1) / 2 * (len - 1) : ((g + 1) * len - 1) / 2;
    if (mode_ == GridMode::kNearest) v = std::nearbyint(v);
    const double lo = align_corners_ ? 0.0 : -0.5, hi = align_corners_ ? len - 1 : len - 0.5;
    if (v < lo || v > hi) {
      // Cubic with border padding clamps each tap rather than the coordinate, as PyTorch and
      // ONNX Runtime do (the ONNX reference implementation clamps the coordinate first, which
      // moves the taps and changes the result; docs/semantics.md).
      if (padding_ == GridPadding::kBorder && mode_ != GridMode::kCubic) {
        v = std::clamp(v, 0.0, len - 1);
      }
      if (padding_ == GridPadding::kReflection) v = reflect(v, lo, hi);
    }
    AxisTaps taps;
    if (mode_ == GridMode::kNearest) {
      taps.add(pad_index(std::trunc(v), size), 1.0);
      return taps;
    }
    const double v0 = std::floor(v), tt = v - v0;
    if (mode_ == GridMode::kLinear) {
      taps.add(pad_index(v0, size), 1 - tt);
      taps.add(pad_index(v0 + 1, size), tt);
      return taps;
    }
    double cc[4];
    cubic_coeffs(tt, cc);
    for (int j = 0; j < 4; ++j) taps.add(pad_index(v0 - 1 + j, size), cc[j]);
    return taps;
  }

  // The index that integral coordinate i reads under the padding, or -1 for a zero. i stays a
  // double until it is known to be in range, so a huge grid value cannot overflow a cast.
  int64_t pad_index(double i, int64_t size) const {
    const double hi = static_cast<double>(size - 1);
    if (i >= 0 && i <= hi) return static_cast<int64_t>(i);
    if (padding_ == GridPadding::kZeros || size == 0) return -1;
    if (padding_ == GridPadding::kBorder) return i < 0 ? 0 : size - 1;
    const double r = align_corners_ ? reflect(i, 0, hi) : reflect(i, -0.5, hi + 0.5);
    return static_cast<int64_t>(std::clamp(std::trunc(r), 0.0, hi));
  }

  GridMode mode_;
  GridPadding padding_;
  bool align_corners_;
  bool only_4d_;
};

Status infer_grid_sample(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  const TypeInfo& grid = ctx.input_type(1);
  TypeInfo out;
  out.dtype = x.dtype;
  if (x.has_rank() && grid.has_rank() && x.rank() == grid.rank() && x.rank() >= 3) {
    std::vector<Dim> dims{(*x.shape)[0], (*x.shape)[1]};
    for (int64_t d = 1; d < grid.rank() - 1; ++d) dims.push_back((*grid.shape)[d]);
    out.shape = dims;
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_grid_sample(Registrar& r) {
  r.add({.op_type = "GridSample",
         .since = 16,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const bool v20 = ctx.opset() >= 20;
           const std::string mode = r.get_string("mode", v20 ? "linear" : "bilinear");
           const std::string padding = r.get_string("padding_mode", "zeros");
           const bool align = r.get_int("align_corners", 0) != 0;
           RECUR_RETURN_IF_ERROR(r.status());
           GridMode m;
           if (mode == (v20 ? "linear" : "bilinear")) {
             m = GridMode::kLinear;
           } else if (mode == "nearest") {
             m = GridMode::kNearest;
           } else if (mode == (v20 ? "cubic" : "bicubic")) {
             m = GridMode::kCubic;
           } else {
             return ctx.error(ErrorCode::kInvalidModel, "unknown mode '" + mode + "'");
           }
           GridPadding p;
           if (padding == "zeros") {
             p = GridPadding::kZeros;
           } else if (padding == "border") {
             p = GridPadding::kBorder;
           } else if (padding == "reflection") {
             p = GridPadding::kReflection;
           } else {
             return ctx.error(ErrorCode::kInvalidModel, "unknown padding_mode '" + padding + "'");
           }
           return std::make_unique<GridSampleKernel>(m, p, align, !v20);
         }},
        infer_grid_sample);
}

}  // namespace recur::reference
