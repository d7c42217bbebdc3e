// InstanceNormalization (opsets 1, 6): per (sample, channel) normalisation over the spatial
// dimensions, then scale[c] and B[c].
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(double epsilon) : epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* bias, required_input(ctx, 2));
    if (x->rank() < 3) {
      return invalid_argument("input must have rank >= 3 ([N, C, spatial...]), got " +
                              shape_to_string(x->shape()));
    }
    const int64_t n = x->dim(0), c = x->dim(1);
    if (scale->numel() != c || bias->numel() != c) {
      return invalid_argument("scale " + shape_to_string(scale->shape()) + " and B " +
                              shape_to_string(bias->shape()) + " should have " + std::to_string(c) +
                              " values");
    }
    if (scale->dtype() != x->dtype() || bias->dtype() != x->dtype()) {
      return invalid_argument("input, scale and B must have the same dtype");
    }
    const int64_t size = n * c == 0 ? 0 : x->numel() / (n * c);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    // A row (sample, channel) at a time, in double, straight from X into Y: no copy of the
    // whole tensor.
    const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ComputeView<T> xv(*x), sv(*scale), bv(*bias);
      ComputeOut<T> yv(*y);
      for (int64_t i = 0; i < n * c; ++i) {
        const auto* xi = xv.data() + i * size;
        auto* yi = yv.data() + i * size;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < size; ++j) mean += static_cast<double>(xi[j]);
        mean /= static_cast<double>(size);
        for (int64_t j = 0; j < size; ++j) {
          const double d = static_cast<double>(xi[j]) - mean;
          var += d * d;
        }
        var /= static_cast<double>(size);
        const double inv = 1.0 / std::sqrt(var + epsilon_);
        const double sc = static_cast<double>(sv.data()[i % c]);
        const double bs = static_cast<double>(bv.data()[i % c]);
        using C = std::remove_reference_t<decltype(*yi)>;
        for (int64_t j = 0; j < size; ++j)
          yi[j] = static_cast<C>((static_cast<double>(xi[j]) - mean) * inv * sc + bs);
      }
      yv.flush();
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  double epsilon_;
};

}  // namespace

void register_instance_normalization(Registrar& r) {
  r.add({.op_type = "InstanceNormalization",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const double eps = r.get_float("epsilon", 1e-5f);
           RECUR_RETURN_IF_ERROR(r.status());
           return std::make_unique<InstanceNormKernel>(eps);
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
