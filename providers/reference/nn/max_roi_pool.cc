// MaxRoiPool (opsets 1, 22): the maximum over each of pooled_shape bins of each region of
// interest, as Caffe's ROIPooling defines it (and onnxruntime follows): region corners rounded
// after spatial_scale, at least one pixel, bins of floor/ceil extent, empty bins give 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class MaxRoiPoolKernel final : public Kernel {
 public:
  MaxRoiPoolKernel(int64_t ph, int64_t pw, double scale) : ph_(ph), pw_(pw), scale_(scale) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* r, required_input(ctx, 1));
    if (x->rank() != 4) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be [N, C, H, W], not " + shape_to_string(x->shape()));
    }
    if (r->rank() != 2 || r->shape()[1] != 5) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "rois must be [num_rois, 5], not " + shape_to_string(r->shape()));
    }
    const int64_t n = x->shape()[0], c = x->shape()[1], h = x->shape()[2], w = x->shape()[3];
    const int64_t num_rois = r->shape()[0];
    const Shape out_shape{num_rois, c, ph_, pw_};
    RECUR_ASSIGN_OR_RETURN(int64_t numel, checked_numel(out_shape, "output"));
    auto xs = read_as_double(*x, "X");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    auto rois = read_as_double(*r, "rois");
    if (!rois.ok()) return rois.status().with_context(ctx.node().describe());
    std::vector<double> ys(static_cast<size_t>(numel), 0.0);
    for (int64_t i = 0; i < num_rois; ++i) {
      const double* roi = rois->data() + i * 5;
      const double batch = roi[0];
      if (!(batch >= 0 && batch < static_cast<double>(n))) {
        return ctx.error(ErrorCode::kOutOfRange, "roi " + std::to_string(i) + " has batch index " +
                                                     std::to_string(batch) + ", outside [0, " +
                                                     std::to_string(n) + ")");
      }
      for (int k = 1; k < 5; ++k) {
        // Far beyond any image, yet small enough that the bin arithmetic stays exact.
        if (!(std::fabs(roi[k] * scale_) < 1e15)) {
          return ctx.error(ErrorCode::kOutOfRange,
                           "roi " + std::to_string(i) + " has a corner that is not a finite size");
        }
      }
      const auto corner = [&](double v) { return static_cast<int64_t>(std::round(v * scale_)); };
      const int64_t x1 = corner(roi[1]), y1 = corner(roi[2]);
      const int64_t rw = std::max<int64_t>(corner(roi[3]) - x1 + 1, 1);
      const int64_t rh = std::max<int64_t>(corner(roi[4]) - y1 + 1, 1);
      const double bin_h = static_cast<double>(rh) / static_cast<double>(ph_);
      const double bin_w = static_cast<double>(rw) / static_cast<double>(pw_);
      const double* img = xs->data() + static_cast<int64_t>(batch) * c * h * w;
      double* out = ys.data() + i * c * ph_ * pw_;
      const auto clip = [](int64_t v, int64_t hi) { return std::clamp<int64_t>(v, 0, hi); };
      for (int64_t py = 0; py < ph_; ++py) {
        const int64_t hs = clip(static_cast<int64_t>(std::floor(py * bin_h)) + y1, h);
        const int64_t he = clip(static_cast<int64_t>(std::ceil((py + 1) * bin_h)) + y1, h);
        for (int64_t px = 0; px < pw_; ++px) {
          const int64_t ws = clip(static_cast<int64_t>(std::floor(px * bin_w)) + x1, w);
          const int64_t we = clip(static_cast<int64_t>(std::ceil((px + 1) * bin_w)) + x1, w);
          if (he <= hs || we <= ws) continue;  // an empty bin stays 0
          for (int64_t ch = 0; ch < c; ++ch) {
            double m = -std::numeric_limits<double>::infinity();
            for (int64_t yy = hs; yy < he; ++yy)
              for (int64_t xx = ws; xx < we; ++xx) m = std::max(m, img[(ch * h + yy) * w + xx]);
            out[(ch * ph_ + py) * pw_ + px] = m;
          }
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  int64_t ph_, pw_;
  double scale_;
};

Result<std::vector<int64_t>> read_pooled_shape(const Node& node) {
  AttrReader attrs(node);
  if (!attrs.has("pooled_shape"))
    return invalid_model(node.describe() + ": pooled_shape is required");
  std::vector<int64_t> p = attrs.get_ints("pooled_shape");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (p.size() != 2 || p[0] <= 0 || p[1] <= 0) {
    return invalid_model(node.describe() + ": pooled_shape " + shape_to_string(p) +
                         " must be two positive sizes");
  }
  return p;
}

Result<std::unique_ptr<Kernel>> create_max_roi_pool(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(std::vector<int64_t> p, read_pooled_shape(ctx.node()));
  AttrReader attrs(ctx.node());
  const float scale = attrs.get_float("spatial_scale", 1.0f);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<MaxRoiPoolKernel>(p[0], p[1], scale);
}

Status infer_max_roi_pool(InferContext& ctx) {
  auto p = read_pooled_shape(ctx.node());
  if (!p.ok()) return p.status();
  const TypeInfo& x = ctx.input_type(0);
  const TypeInfo& rois = ctx.input_type(1);
  std::vector<Dim> dims(4);
  if (rois.shape && rois.shape->size() == 2) dims[0] = (*rois.shape)[0];
  if (x.shape && x.shape->size() == 4) dims[1] = (*x.shape)[1];
  dims[2] = Dim{(*p)[0], {}};
  dims[3] = Dim{(*p)[1], {}};
  ctx.set_output(0, TypeInfo{x.dtype, std::move(dims)});
  return ok_status();
}

}  // namespace

void register_max_roi_pool(Registrar& r) {
  r.add({.op_type = "MaxRoiPool", .since = 1, .create = create_max_roi_pool}, infer_max_roi_pool);
}

}  // namespace recur::reference
