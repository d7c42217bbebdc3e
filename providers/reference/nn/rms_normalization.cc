// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale.
// X and scale may differ in dtype (T and V); Y takes scale's.
#include <cmath>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class RmsNormKernel final : public Kernel {
 public:
  RmsNormKernel(int64_t axis, double epsilon) : axis_(axis), epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    if (!is_floating(x->dtype()) || !is_floating(scale->dtype())) {
      return invalid_argument("X (" + std::string(dtype_name(x->dtype())) + ") and scale (" +
                              std::string(dtype_name(scale->dtype())) +
                              ") must be float32, float64, float16 or bfloat16");
    }
    RECUR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, x->rank(), "axis"));
    // The function body multiplies by scale after normalising, so any scale that broadcasts
    // to X one way (the normalised shape included) is accepted.
    if (!broadcastable_to(scale->shape(), x->shape())) {
      return invalid_argument("scale " + shape_to_string(scale->shape()) + " must broadcast to X " +
                              shape_to_string(x->shape()));
    }
    const Shape inner(x->shape().begin() + axis, x->shape().end());
    const int64_t size = shape_numel(inner);
    const int64_t outer = size == 0 ? 0 : x->numel() / size;
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> sc, read_as_double(*scale, "scale"));
    // Stage one (the normalisation) is done in double, which is at least as precise as any
    // stash_type asks for.
    std::vector<double> ys(xs.size());
    for (int64_t o = 0; o < outer; ++o) {
      const double* xo = xs.data() + o * size;
      double sq = 0;
      for (int64_t j = 0; j < size; ++j) sq += xo[j] * xo[j];
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(size) + epsilon_);
      for (int64_t j = 0; j < size; ++j) ys[static_cast<size_t>(o * size + j)] = xo[j] * inv;
    }
    const Shape sc_shape = scale->shape();
    for_each_broadcast<1>(x->shape(), {&sc_shape}, [&](int64_t i, const std::array<int64_t, 1>& s) {
      ys[static_cast<size_t>(i)] *= sc[static_cast<size_t>(s[0])];
    });
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, scale->dtype(), x->shape()));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  int64_t axis_;
  double epsilon_;
};

// Y: X's shape, scale's dtype.
Status infer_rms_norm(InferContext& ctx) {
  TypeInfo y = ctx.input_type(0);
  y.dtype = ctx.input_type(1).dtype;
  ctx.set_output(0, y);
  return ok_status();
}

}  // namespace

void register_rms_normalization(Registrar& r) {
  r.add({.op_type = "RMSNormalization",
         .since = 23,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t axis = r.get_int("axis", -1);
           const double eps = r.get_float("epsilon", 1e-5f);
           const int64_t stash = r.get_int("stash_type", 1);
           RECUR_RETURN_IF_ERROR(r.status());
           if (!is_floating(static_cast<DType>(stash))) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "stash_type " + std::to_string(stash) +
                                  " is not a floating-point type (1, 10, 11 or 16)");
           }
           return std::make_unique<RmsNormKernel>(axis, eps);
         }},
        infer_rms_norm);
}

}  // namespace recur::reference
