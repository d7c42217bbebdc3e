// GridSample (opset 16): samples X [N, C, H, W] at the normalised (x, y) positions of
// grid [N, Ho, Wo, 2]; bilinear, nearest or bicubic, with zeros, border or reflection padding.
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

enum class GridMode { kBilinear, kNearest, kBicubic };
enum class GridPadding { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] (given doubled, to stay in integers for the bounds).
double reflect(double x, double twice_lo, double twice_hi) {
  if (twice_lo == twice_hi) return 0;
  const double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const auto flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GridMode mode, GridPadding padding, bool align_corners)
      : mode_(mode), padding_(padding), align_corners_(align_corners) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* grid, required_input(ctx, 1));
    if (x->rank() != 4 || grid->rank() != 4 || grid->dim(0) != x->dim(0) || grid->dim(3) != 2) {
      return invalid_argument("X must be [N, C, H, W] and grid [N, H_out, W_out, 2], got " +
                              shape_to_string(x->shape()) + " and " +
                              shape_to_string(grid->shape()));
    }
    const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
    const int64_t ho = grid->dim(1), wo = grid->dim(2);
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> gs, read_as_double(*grid, "grid"));
    std::vector<double> ys(static_cast<size_t>(n * c * ho * wo));
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < ho; ++i) {
        for (int64_t j = 0; j < wo; ++j) {
          const size_t g = static_cast<size_t>(((b * ho + i) * wo + j) * 2);
          const double px = unnormalize(gs[g], w), py = unnormalize(gs[g + 1], h);
          for (int64_t ch = 0; ch < c; ++ch) {
            const double* plane = xs.data() + (b * c + ch) * h * w;
            ys[static_cast<size_t>(((b * c + ch) * ho + i) * wo + j)] = sample(plane, h, w, px, py);
          }
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), {n, c, ho, wo}));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  double unnormalize(double g, int64_t size) const {
    return align_corners_ ? (g + 1) / 2 * static_cast<double>(size - 1)
                          : ((g + 1) * static_cast<double>(size) - 1) / 2;
  }
  // Applies border or reflection padding to a source coordinate.
  double pad_coordinate(double v, int64_t size) const {
    const double hi = static_cast<double>(size - 1);
    if (padding_ == GridPadding::kBorder) return std::min(hi, std::max(0.0, v));
    if (padding_ == GridPadding::kReflection) {
      v = align_corners_ ? reflect(v, 0, 2 * hi) : reflect(v, -1, 2 * hi + 1);
      return std::min(hi, std::max(0.0, v));
    }
    return v;
  }
  // The pixel at integral coordinates (y, x), or 0 outside the image. Coordinates stay
  // doubles until they are known to be in range, so a huge grid value cannot overflow a cast.
  static double at(const double* plane, int64_t h, int64_t w, double y, double x) {
    if (!(y >= 0 && y < static_cast<double>(h) && x >= 0 && x < static_cast<double>(w))) return 0.0;
    return plane[static_cast<int64_t>(y) * w + static_cast<int64_t>(x)];
  }
  double sample(const double* plane, int64_t h, int64_t w, double px, double py) const {
    if (!std::isfinite(px) || !std::isfinite(py)) return 0.0;
    if (mode_ == GridMode::kBicubic) {
      // Each of the 4x4 taps is padded on its own, as PyTorch does.
      const double x0 = std::floor(px), y0 = std::floor(py);
      const double tx = px - x0, ty = py - y0;
      double cx[4], cy[4];
      cubic_coeffs(tx, cx);
      cubic_coeffs(ty, cy);
      double v = 0;
      for (int r = 0; r < 4; ++r) {
        for (int k = 0; k < 4; ++k) {
          const double sy = pad_coordinate(y0 - 1 + r, h), sx = pad_coordinate(x0 - 1 + k, w);
          v += cy[r] * cx[k] * at(plane, h, w, sy, sx);
        }
      }
      return v;
    }
    px = pad_coordinate(px, w);
    py = pad_coordinate(py, h);
    if (mode_ == GridMode::kNearest) {
      return at(plane, h, w, std::nearbyint(py), std::nearbyint(px));
    }
    const double x0 = std::floor(px), y0 = std::floor(py);
    const double tx = px - x0, ty = py - y0;
    return at(plane, h, w, y0, x0) * (1 - tx) * (1 - ty) +
           at(plane, h, w, y0, x0 + 1) * tx * (1 - ty) +
           at(plane, h, w, y0 + 1, x0) * (1 - tx) * ty + at(plane, h, w, y0 + 1, x0 + 1) * tx * ty;
  }
  static void cubic_coeffs(double t, double* c) {
    constexpr double A = -0.75;
    auto near = [](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    auto far = [](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
    c[0] = far(t + 1);
    c[1] = near(t);
    c[2] = near(1 - t);
    c[3] = far(2 - t);
  }

  GridMode mode_;
  GridPadding padding_;
  bool align_corners_;
};

}  // namespace

void register_grid_sample(Registrar& r) {
  r.add({.op_type = "GridSample",
         .since = 16,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const std::string mode = r.get_string("mode", "bilinear");
           const std::string padding = r.get_string("padding_mode", "zeros");
           const bool align = r.get_int("align_corners", 0) != 0;
           RECUR_RETURN_IF_ERROR(r.status());
           GridMode m;
           if (mode == "bilinear") {
             m = GridMode::kBilinear;
           } else if (mode == "nearest") {
             m = GridMode::kNearest;
           } else if (mode == "bicubic") {
             m = GridMode::kBicubic;
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
           return std::make_unique<GridSampleKernel>(m, p, align);
         }});
}

}  // namespace recur::reference
