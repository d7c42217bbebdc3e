// DeformConv (opsets 19, 22): a convolution whose every kernel tap reads X at its regular
// position plus a learned offset (input 2, [N, offset_group * K * k, out...] for K kernel taps
// over k spatial axes), bilinearly interpolated with zeros outside X, and optionally scaled by
// a mask ([N, offset_group * K, out...]). Input channels are split into offset_group groups,
// each with its own offsets and mask.
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

// The value of one channel at a fractional position: the 2^k corners around it weighted
// multilinearly, corners outside the input reading 0.
double sample(const double* plane, const Shape& in, const std::vector<int64_t>& stride,
              const std::vector<double>& pos) {
  const size_t k = in.size();
  for (double v : pos) {
    if (!std::isfinite(v)) return 0.0;
  }
  double v = 0;
  for (uint64_t corner = 0; corner < (uint64_t{1} << k); ++corner) {
    double w = 1;
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < k && inside; ++d) {
      const double lo = std::floor(pos[d]);
      const bool up = ((corner >> d) & 1) != 0;
      const double i = up ? lo + 1 : lo;
      const double t = pos[d] - lo;
      w *= up ? t : 1 - t;
      inside = i >= 0 && i < static_cast<double>(in[d]);
      if (inside) off += static_cast<int64_t>(i) * stride[d];
    }
    if (inside && w != 0) v += w * plane[off];
  }
  return v;
}

class DeformConvKernel final : public Kernel {
 public:
  DeformConvKernel(WindowAttrs attrs, int64_t group, int64_t offset_group)
      : attrs_(std::move(attrs)), group_(group), offset_group_(offset_group) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* offset, required_input(ctx, 2));
    const Tensor* b = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    RECUR_ASSIGN_OR_RETURN(ConvShapes s,
                           check_conv_shapes(attrs_, group_, x->shape(), w->shape(), "X", "W"));
    const Window& win = s.win;
    const auto k = static_cast<int64_t>(win.rank());
    const int64_t kk = win.kernel_size(), p_out = win.out_size(), og = offset_group_;
    if (s.c % og != 0) {
      return invalid_argument("offset_group " + std::to_string(og) + " does not divide the " +
                              std::to_string(s.c) + " input channels");
    }
    Shape want_offset{s.n, og * kk * k}, want_mask{s.n, og * kk};
    want_offset.insert(want_offset.end(), win.out.begin(), win.out.end());
    want_mask.insert(want_mask.end(), win.out.begin(), win.out.end());
    if (offset->shape() != want_offset) {
      return invalid_argument("offset must be " + shape_to_string(want_offset) + ", got " +
                              shape_to_string(offset->shape()));
    }
    if (mask && mask->shape() != want_mask) {
      return invalid_argument("mask must be " + shape_to_string(want_mask) + ", got " +
                              shape_to_string(mask->shape()));
    }
    if (b && (b->rank() != 1 || b->dim(0) != s.m)) {
      return invalid_argument("B must be [" + std::to_string(s.m) + "], got " +
                              shape_to_string(b->shape()));
    }
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> ws, read_as_double(*w, "W"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> os, read_as_double(*offset, "offset"));
    std::vector<double> ms, bs(static_cast<size_t>(s.m), 0.0);
    if (mask) {
      RECUR_ASSIGN_OR_RETURN(ms, read_as_double(*mask, "mask"));
    }
    if (b) {
      RECUR_ASSIGN_OR_RETURN(bs, read_as_double(*b, "B"));
    }
    // col[(c * K + kp) * P + p]: channel c sampled for kernel tap kp at output position p.
    std::vector<double> col(static_cast<size_t>(s.c * kk * p_out));
    std::vector<double> ys(static_cast<size_t>(shape_numel(s.y)));
    const Shape stride = contiguous_strides(win.in);
    const int64_t plane = win.in_size(), c_per_og = s.c / og;
    std::vector<double> pos(static_cast<size_t>(k));
    for (int64_t n = 0; n < s.n; ++n) {
      for (int64_t g = 0; g < og; ++g) {
        for (int64_t kp = 0; kp < kk; ++kp) {
          for (int64_t p = 0; p < p_out; ++p) {
            int64_t prest = p, krest = kp;
            for (int64_t d = k - 1; d >= 0; --d) {
              const auto du = static_cast<size_t>(d);
              const int64_t o = prest % win.out[du], kd = krest % win.kernel[du];
              prest /= win.out[du];
              krest /= win.kernel[du];
              const int64_t ch = ((g * kk + kp) * k + d);
              pos[du] = static_cast<double>(o * win.stride[du] - win.pad_begin[du] +
                                            kd * win.dilation[du]) +
                        os[static_cast<size_t>((n * og * kk * k + ch) * p_out + p)];
            }
            const double m =
                mask ? ms[static_cast<size_t>((n * og * kk + g * kk + kp) * p_out + p)] : 1.0;
            for (int64_t c = g * c_per_og; c < (g + 1) * c_per_og; ++c) {
              const double* xp = xs.data() + (n * s.c + c) * plane;
              col[static_cast<size_t>((c * kk + kp) * p_out + p)] =
                  m * sample(xp, win.in, stride, pos);
            }
          }
        }
      }
      accumulate(s, ws, bs, col, ys.data() + n * s.m * p_out);
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s.y));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  // y[m][p] = B[m] + sum over the group's channels and kernel taps of W times col.
  void accumulate(const ConvShapes& s, const std::vector<double>& ws, const std::vector<double>& bs,
                  const std::vector<double>& col, double* y) const {
    const int64_t kk = s.win.kernel_size(), p_out = s.win.out_size();
    const int64_t c_per_g = s.c / group_, m_per_g = s.m / group_;
    for (int64_t m = 0; m < s.m; ++m) {
      const int64_t c0 = (m / m_per_g) * c_per_g;
      for (int64_t p = 0; p < p_out; ++p) {
        double v = bs[static_cast<size_t>(m)];
        for (int64_t ci = 0; ci < c_per_g; ++ci) {
          for (int64_t kp = 0; kp < kk; ++kp) {
            v += ws[static_cast<size_t>((m * c_per_g + ci) * kk + kp)] *
                 col[static_cast<size_t>(((c0 + ci) * kk + kp) * p_out + p)];
          }
        }
        y[m * p_out + p] = v;
      }
    }
  }

  WindowAttrs attrs_;
  int64_t group_;
  int64_t offset_group_;
};

}  // namespace

void register_deform_conv(Registrar& r) {
  r.add({.op_type = "DeformConv",
         .since = 19,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(WindowAttrs attrs, read_window_attrs(ctx.node()));
           AttrReader r(ctx.node());
           const int64_t group = r.get_int("group", 1);
           const int64_t offset_group = r.get_int("offset_group", 1);
           RECUR_RETURN_IF_ERROR(r.status());
           if (group < 1 || offset_group < 1) {
             return ctx.error(ErrorCode::kInvalidModel, "group and offset_group must be >= 1");
           }
           return std::make_unique<DeformConvKernel>(std::move(attrs), group, offset_group);
         }},
        [](InferContext& ctx) { return infer_conv_like(ctx, ctx.input_type(0).dtype); });
}

}  // namespace recur::reference
