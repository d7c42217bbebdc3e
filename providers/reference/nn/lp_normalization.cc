// LpNormalization (opset 1): x divided by its L1 or L2 norm along `axis`. A zero norm gives
// zeros rather than NaN.
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(int64_t axis, int64_t p) : axis_(axis), p_(p) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, x->rank(), "axis"));
    const Shape& s = x->shape();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= s[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < x->rank(); ++d) inner *= s[static_cast<size_t>(d)];
    const int64_t len = s[static_cast<size_t>(axis)];
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "input"));
    std::vector<double> ys(xs.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double norm = 0;
        for (int64_t k = 0; k < len; ++k) {
          const double v = xs[static_cast<size_t>((o * len + k) * inner + i)];
          norm += p_ == 1 ? std::fabs(v) : v * v;
        }
        if (p_ == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < len; ++k) {
          const auto j = static_cast<size_t>((o * len + k) * inner + i);
          ys[j] = norm == 0 ? 0.0 : xs[j] / norm;
        }
      }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  int64_t axis_, p_;
};

}  // namespace

void register_lp_normalization(Registrar& r) {
  r.add({.op_type = "LpNormalization",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t axis = r.get_int("axis", -1);
           const int64_t p = r.get_int("p", 2);
           RECUR_RETURN_IF_ERROR(r.status());
           if (p != 1 && p != 2) return ctx.error(ErrorCode::kInvalidModel, "p must be 1 or 2");
           return std::make_unique<LpNormKernel>(axis, p);
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
