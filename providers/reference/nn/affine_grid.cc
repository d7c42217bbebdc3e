// AffineGrid (opset 20): the sampling grid for GridSample that an affine transform theta
// ([N, 2, 3] or [N, 3, 4]) makes of the normalised coordinates of an output of size
// [N, C, H, W] or [N, C, D, H, W]. Output [N, H, W, 2] or [N, D, H, W, 3], coordinates
// innermost first (x, y, z), as GridSample reads them.
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

// The normalised coordinate of position i along an axis of length len, in [-1, 1]: the pixel
// centres, or with align_corners the first and last pixels at -1 and 1.
double base_coordinate(int64_t i, int64_t len, bool align_corners) {
  const auto fi = static_cast<double>(i), fl = static_cast<double>(len);
  if (align_corners) return len > 1 ? -1.0 + 2.0 * fi / (fl - 1) : -1.0;
  return -1.0 + (2.0 * fi + 1.0) / fl;
}

class AffineGridKernel final : public Kernel {
 public:
  explicit AffineGridKernel(bool align_corners) : align_corners_(align_corners) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* theta, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* size_t_, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(std::vector<int64_t> size, read_int_values(*size_t_, "size"));
    if (size.size() != 4 && size.size() != 5) {
      return invalid_argument("size must have 4 or 5 values, got " + std::to_string(size.size()));
    }
    const auto k = static_cast<int64_t>(size.size()) - 2;  // spatial dims
    const int64_t n = size[0];
    if (theta->rank() != 3 || theta->dim(0) != n || theta->dim(1) != k || theta->dim(2) != k + 1) {
      return invalid_argument("theta must be [" + std::to_string(n) + ", " + std::to_string(k) +
                              ", " + std::to_string(k + 1) + "], got " +
                              shape_to_string(theta->shape()));
    }
    // Spatial sizes innermost first: W, H (, D).
    std::vector<int64_t> spatial(size.rbegin(), size.rbegin() + k);
    Shape out_shape{n};
    for (int64_t d = 2; d < 2 + k; ++d) out_shape.push_back(size[static_cast<size_t>(d)]);
    out_shape.push_back(k);
    RECUR_ASSIGN_OR_RETURN(const int64_t total, checked_numel(out_shape, "the output"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> th, read_as_double(*theta, "theta"));
    std::vector<double> ys(static_cast<size_t>(total));
    const int64_t points = n > 0 && k > 0 ? total / (n * k) : 0;
    std::vector<double> base(static_cast<size_t>(k + 1), 1.0);
    for (int64_t p = 0; p < points; ++p) {
      int64_t rest = p;
      for (int64_t d = 0; d < k; ++d) {
        const int64_t len = spatial[static_cast<size_t>(d)];
        base[static_cast<size_t>(d)] = base_coordinate(rest % len, len, align_corners_);
        rest /= len;
      }
      for (int64_t b = 0; b < n; ++b) {
        const double* t = th.data() + b * k * (k + 1);
        double* out = ys.data() + (b * points + p) * k;
        for (int64_t row = 0; row < k; ++row) {
          double v = 0;
          for (int64_t col = 0; col <= k; ++col) {
            v += t[row * (k + 1) + col] * base[static_cast<size_t>(col)];
          }
          out[row] = v;
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, theta->dtype(), out_shape));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  bool align_corners_;
};

// The output shape needs the values of size; otherwise only the rank, when size's length is
// known.
Status infer_affine_grid(InferContext& ctx) {
  TypeInfo out;
  out.dtype = ctx.input_type(0).dtype;
  const Tensor* size = ctx.has_input(1) ? ctx.input_value(1) : nullptr;
  if (size) {
    auto v = read_int_values(*size, "size");
    if (v.ok() && (v->size() == 4 || v->size() == 5)) {
      std::vector<Dim> dims{Dim{.value = (*v)[0]}};
      for (size_t d = 2; d < v->size(); ++d) dims.push_back(Dim{.value = (*v)[d]});
      dims.push_back(Dim{.value = static_cast<int64_t>(v->size()) - 2});
      out.shape = dims;
    }
  } else {
    const TypeInfo& s = ctx.input_type(1);
    if (s.has_rank() && s.rank() == 1 && (*s.shape)[0].is_fixed()) {
      const int64_t len = (*s.shape)[0].value;
      if (len == 4 || len == 5) {
        out.shape = std::vector<Dim>(static_cast<size_t>(len - 1));
        out.shape->back() = Dim{.value = len - 2};
      }
    }
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_affine_grid(Registrar& r) {
  r.add({.op_type = "AffineGrid",
         .since = 20,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const bool align = r.get_int("align_corners", 0) != 0;
           RECUR_RETURN_IF_ERROR(r.status());
           return std::make_unique<AffineGridKernel>(align);
         }},
        infer_affine_grid);
}

}  // namespace recur::reference
