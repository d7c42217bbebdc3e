// DFT (opset 17): input [batch, n..., 1 or 2] (real, or complex as (re, im) pairs), a transform
// along `axis` (default 1) of length dft_length (input 1; default the axis' length, the input
// zero-padded or truncated to it). `inverse` gives the inverse transform (scaled by 1/length);
// `onesided` keeps the first floor(length / 2) + 1 bins. Output [..., 2].
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_util.h"
#include "providers/reference/signal/signal_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class DftKernel final : public Kernel {
 public:
  DftKernel(int64_t axis, bool inverse, bool onesided)
      : axis_(axis), inverse_(inverse), onesided_(onesided) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const int64_t rank = x->rank();
    if (rank < 2 || (x->dim(-1) != 1 && x->dim(-1) != 2)) {
      return ctx.error(
          ErrorCode::kInvalidArgument,
          "the input must have shape [batch, n..., 1 or 2], got " + shape_to_string(x->shape()));
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank - 2) {
      return ctx.error(ErrorCode::kOutOfRange, "axis " + std::to_string(axis_) +
                                                   " is out of range for an input of rank " +
                                                   std::to_string(rank));
    }
    const int64_t n = x->dim(axis);
    int64_t length = n;
    if (const Tensor* l = ctx.input(1)) {
      auto v = read_scalar_int(*l, "dft_length");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      length = *v;
    }
    if (length < 1 || length > (int64_t{1} << 31)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "dft_length " + std::to_string(length) + " must be in [1, 2^31]");
    }
    const int64_t bins = onesided_ ? length / 2 + 1 : length;
    Shape out_shape = x->shape();
    out_shape[static_cast<size_t>(axis)] = bins;
    out_shape.back() = 2;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, allocate_checked(ctx, 0, x->dtype(), out_shape));
    auto xs = read_as_double(*x, "input");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    const int64_t comps = x->dim(-1);
    const int64_t outer = dims_product(x->shape(), 0, static_cast<size_t>(axis));
    const int64_t inner =
        dims_product(x->shape(), static_cast<size_t>(axis) + 1, static_cast<size_t>(rank) - 1);
    std::vector<double> ys(static_cast<size_t>(y->numel()));
    const DftPlan plan(length, inverse_);
    std::vector<std::complex<double>> line(static_cast<size_t>(std::min(n, length))), result;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (size_t t = 0; t < line.size(); ++t) {
          const size_t at =
              static_cast<size_t>(((o * n + static_cast<int64_t>(t)) * inner + i) * comps);
          line[t] = {(*xs)[at], comps == 2 ? (*xs)[at + 1] : 0.0};
        }
        plan.run(line, bins, &result);
        for (int64_t k = 0; k < bins; ++k) {
          const size_t at = static_cast<size_t>(((o * bins + k) * inner + i) * 2);
          ys[at] = result[static_cast<size_t>(k)].real();
          ys[at + 1] = result[static_cast<size_t>(k)].imag();
        }
      }
    }
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  int64_t axis_;
  bool inverse_;
  bool onesided_;
};

}  // namespace

void register_dft(Registrar& r) {
  r.add({.op_type = "DFT",
         .since = 17,
         .until = 19,  // opset 20 moves axis to an input
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const int64_t axis = attrs.get_int("axis", 1);
           const int64_t inverse = attrs.get_int("inverse", 0);
           const int64_t onesided = attrs.get_int("onesided", 0);
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<DftKernel>(axis, inverse != 0, onesided != 0);
         }});
}

}  // namespace recur::reference
