// LRN (opsets 1, 13): local response normalisation across channels,
// y = x / (bias + alpha / size * sum of x^2 over the neighbouring channels)^beta.
#include <algorithm>
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class LrnKernel final : public Kernel {
 public:
  LrnKernel(double alpha, double beta, double bias, int64_t size)
      : alpha_(alpha), beta_(beta), bias_(bias), size_(size) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() < 2) {
      return invalid_argument("X must have rank >= 2 ([N, C, ...]), got " +
                              shape_to_string(x->shape()));
    }
    const int64_t n = x->dim(0), c = x->dim(1);
    const int64_t spatial = n * c == 0 ? 0 : x->numel() / (n * c);
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    std::vector<double> ys(xs.size());
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t s = 0; s < spatial; ++s) {
          double sq = 0;
          for (int64_t k = std::max<int64_t>(0, ci - before); k <= std::min(c - 1, ci + after);
               ++k) {
            const double v = xs[static_cast<size_t>((b * c + k) * spatial + s)];
            sq += v * v;
          }
          const auto i = static_cast<size_t>((b * c + ci) * spatial + s);
          ys[i] = xs[i] / std::pow(bias_ + alpha_ / static_cast<double>(size_) * sq, beta_);
        }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  double alpha_, beta_, bias_;
  int64_t size_;
};

}  // namespace

void register_lrn(Registrar& r) {
  r.add({.op_type = "LRN",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const double alpha = r.get_float("alpha", 1e-4f);
           const double beta = r.get_float("beta", 0.75f);
           const double bias = r.get_float("bias", 1.0f);
           const int64_t size = r.require_int("size");
           RECUR_RETURN_IF_ERROR(r.status());
           if (size <= 0) return ctx.error(ErrorCode::kInvalidModel, "size must be positive");
           return std::make_unique<LrnKernel>(alpha, beta, bias, size);
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
