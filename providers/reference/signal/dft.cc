// DFT (opsets 17, 20): input [batch, n..., 1 or 2] (real, or complex as (re, im) pairs), a
// transform along `axis` of length dft_length (input 1; default the axis' length, the input
// zero-padded or truncated to it). Opset 17 takes axis as an attribute (default 1), opset 20 as
// the scalar input 2 (default -2). `inverse` gives the inverse transform (scaled by 1/length);
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
    int64_t axis_value = axis_;
    if (ctx.node().opset >= 20) {
      axis_value = -2;
      if (const Tensor* a = ctx.input(2)) {
        auto v = read_scalar_int(*a, "axis");
        if (!v.ok()) return v.status().with_context(ctx.node().describe());
        axis_value = *v;
      }
    }
    const int64_t axis = axis_value < 0 ? axis_value + rank : axis_value;
    if (axis < 0 || axis > rank - 2) {
      return ctx.error(ErrorCode::kOutOfRange, "axis " + std::to_string(axis_value) +
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
    const DftPlan plan(length, inverse_, std::min(n, length), bins);
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

// The output keeps the input's rank, with 2 components; the transformed axis gets its length
// only when axis and dft_length are known.
Status infer_dft(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  TypeInfo out;
  out.dtype = x.dtype;
  if (!x.has_rank() || x.rank() < 2) {
    ctx.set_output(0, out);
    return ok_status();
  }
  std::vector<Dim> dims = *x.shape;
  dims.back() = Dim{.value = 2};
  const int64_t rank = x.rank();
  std::optional<int64_t> axis;
  if (ctx.opset() < 20) {
    AttrReader r(ctx.node());
    axis = r.get_int("axis", 1);
  } else if (ctx.num_inputs() <= 2 || !ctx.has_input(2)) {
    axis = -2;
  } else if (const Tensor* a = ctx.input_value(2)) {
    auto v = read_scalar_int(*a, "axis");
    if (v.ok()) axis = *v;
  }
  if (axis && *axis < 0) *axis += rank;
  if (!axis || *axis < 0 || *axis > rank - 2) {
    // An unknown axis could be any but the last; a bad one fails when the kernel runs.
    for (size_t d = 0; d + 1 < dims.size(); ++d) dims[d] = Dim{};
  } else {
    auto& len = dims[static_cast<size_t>(*axis)];
    if (ctx.num_inputs() > 1 && ctx.has_input(1)) {
      const Tensor* l = ctx.input_value(1);
      auto v = l ? read_scalar_int(*l, "dft_length") : Result<int64_t>(invalid_argument(""));
      len = v.ok() ? Dim{.value = *v} : Dim{};
    }
    AttrReader r(ctx.node());
    if (r.get_int("onesided", 0) != 0)
      len = len.is_fixed() ? Dim{.value = len.value / 2 + 1} : Dim{};
  }
  out.shape = dims;
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_dft(Registrar& r) {
  r.add({.op_type = "DFT",
         .since = 17,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const int64_t axis = attrs.get_int("axis", 1);
           const int64_t inverse = attrs.get_int("inverse", 0);
           const int64_t onesided = attrs.get_int("onesided", 0);
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<DftKernel>(axis, inverse != 0, onesided != 0);
         }},
        infer_dft);
}

}  // namespace recur::reference
