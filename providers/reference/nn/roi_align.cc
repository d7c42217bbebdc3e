// RoiAlign (opsets 10, 16): average or max of bilinear samples over each output bin of each
// region of interest. Opset 16 adds coordinate_transformation_mode (half_pixel by default);
// opset 10 behaves as output_half_pixel.
#include <algorithm>
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

struct RoiAttrs {
  bool max_mode = false;
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  double spatial_scale = 1.0;
  bool half_pixel = false;
};

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(RoiAttrs a) : a_(a) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* rois_t, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* idx_t, required_input(ctx, 2));
    if (x->rank() != 4 || rois_t->rank() != 2 || rois_t->dim(1) != 4 || idx_t->rank() != 1 ||
        idx_t->dim(0) != rois_t->dim(0)) {
      return invalid_argument("expected X [N, C, H, W], rois [R, 4] and batch_indices [R], got " +
                              shape_to_string(x->shape()) + ", " +
                              shape_to_string(rois_t->shape()) + " and " +
                              shape_to_string(idx_t->shape()));
    }
    const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3), R = rois_t->dim(0);
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> rois, read_as_double(*rois_t, "rois"));
    RECUR_ASSIGN_OR_RETURN(std::vector<int64_t> bidx, read_int_values(*idx_t, "batch_indices"));
    const Shape ys_shape{R, c, a_.out_h, a_.out_w};
    RECUR_RETURN_IF_ERROR(checked_numel(ys_shape, "the output shape").status());
    std::vector<double> ys(static_cast<size_t>(shape_numel(ys_shape)), 0.0);
    const double offset = a_.half_pixel ? 0.5 : 0.0;
    for (int64_t r = 0; r < R; ++r) {
      const int64_t b = bidx[static_cast<size_t>(r)];
      if (b < 0 || b >= n) {
        return out_of_range("batch index " + std::to_string(b) + " of roi " + std::to_string(r) +
                            " is outside [0, " + std::to_string(n) + ")");
      }
      const double* roi = rois.data() + r * 4;
      const double x1 = roi[0] * a_.spatial_scale - offset, y1 = roi[1] * a_.spatial_scale - offset;
      const double x2 = roi[2] * a_.spatial_scale - offset, y2 = roi[3] * a_.spatial_scale - offset;
      double rw = x2 - x1, rh = y2 - y1;
      if (!a_.half_pixel) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      const double bin_h = rh / static_cast<double>(a_.out_h);
      const double bin_w = rw / static_cast<double>(a_.out_w);
      if (!std::isfinite(rw) || !std::isfinite(rh)) {
        return invalid_argument("roi " + std::to_string(r) + " has non-finite coordinates");
      }
      // Samples per bin: sampling_ratio, or enough to cover the bin (bounded before the cast).
      const double want_h = a_.sampling_ratio > 0 ? static_cast<double>(a_.sampling_ratio)
                                                  : std::ceil(rh / static_cast<double>(a_.out_h));
      const double want_w = a_.sampling_ratio > 0 ? static_cast<double>(a_.sampling_ratio)
                                                  : std::ceil(rw / static_cast<double>(a_.out_w));
      if (want_h > (1 << 20) || want_w > (1 << 20)) {
        return invalid_argument("roi " + std::to_string(r) + " is too large to sample");
      }
      const int64_t gh = std::max<int64_t>(0, static_cast<int64_t>(want_h));
      const int64_t gw = std::max<int64_t>(0, static_cast<int64_t>(want_w));
      const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* plane = xs.data() + (b * c + ch) * h * w;
        for (int64_t ph = 0; ph < a_.out_h; ++ph) {
          for (int64_t pw = 0; pw < a_.out_w; ++pw) {
            double acc = 0;
            bool first = true;
            for (int64_t iy = 0; iy < gh; ++iy) {
              const double yy = y1 + static_cast<double>(ph) * bin_h +
                                (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(gh);
              for (int64_t ix = 0; ix < gw; ++ix) {
                const double xx = x1 + static_cast<double>(pw) * bin_w +
                                  (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(gw);
                double v[4] = {0, 0, 0, 0};
                bilinear_terms(plane, h, w, yy, xx, v);
                if (a_.max_mode) {
                  // The maximum of the four weighted corner terms (ONNX Runtime's definition).
                  const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                  acc = first ? m : std::max(acc, m);
                  first = false;
                } else {
                  acc += v[0] + v[1] + v[2] + v[3];
                }
              }
            }
            ys[static_cast<size_t>(((r * c + ch) * a_.out_h + ph) * a_.out_w + pw)] =
                a_.max_mode ? acc : acc / count;
          }
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), ys_shape));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  // The four weighted corner values of a bilinear sample; zero outside [-1, size].
  static void bilinear_terms(const double* plane, int64_t h, int64_t w, double y, double x,
                             double* out) {
    if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    auto yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x);
    int64_t yh, xh;
    if (yl >= h - 1) {
      yh = yl = h - 1;
      y = static_cast<double>(yl);
    } else {
      yh = yl + 1;
    }
    if (xl >= w - 1) {
      xh = xl = w - 1;
      x = static_cast<double>(xl);
    } else {
      xh = xl + 1;
    }
    const double ly = y - static_cast<double>(yl), lx = x - static_cast<double>(xl);
    const double hy = 1 - ly, hx = 1 - lx;
    out[0] = hy * hx * plane[yl * w + xl];
    out[1] = hy * lx * plane[yl * w + xh];
    out[2] = ly * hx * plane[yh * w + xl];
    out[3] = ly * lx * plane[yh * w + xh];
  }

  RoiAttrs a_;
};

}  // namespace

void register_roi_align(Registrar& r) {
  r.add({.op_type = "RoiAlign",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           RoiAttrs a;
           const std::string mode = r.get_string("mode", "avg");
           a.out_h = r.get_int("output_height", 1);
           a.out_w = r.get_int("output_width", 1);
           a.sampling_ratio = r.get_int("sampling_ratio", 0);
           a.spatial_scale = r.get_float("spatial_scale", 1.0f);
           const std::string ct = ctx.opset() >= 16
                                      ? r.get_string("coordinate_transformation_mode", "half_pixel")
                                      : "output_half_pixel";
           RECUR_RETURN_IF_ERROR(r.status());
           if (mode != "avg" && mode != "max") {
             return ctx.error(ErrorCode::kInvalidModel, "unknown mode '" + mode + "'");
           }
           if (ct != "half_pixel" && ct != "output_half_pixel") {
             return ctx.error(ErrorCode::kInvalidModel,
                              "unknown coordinate_transformation_mode '" + ct + "'");
           }
           if (a.out_h <= 0 || a.out_w <= 0 || a.sampling_ratio < 0) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "output_height and output_width must be positive, sampling_ratio "
                              "non-negative");
           }
           a.max_mode = mode == "max";
           a.half_pixel = ct == "half_pixel";
           return std::make_unique<RoiAlignKernel>(a);
         }});
}

}  // namespace recur::reference
