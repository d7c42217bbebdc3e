// BatchNormalization (opsets 1, 6, 7, 9, 14, 15). Inference uses the given statistics;
// training_mode=1 (opset 14+) normalises with the batch statistics and also returns the
// updated running mean and variance. Before opset 9, spatial=0 gives per-activation
// statistics of shape [C, D1, ...].
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(double epsilon, double momentum, bool training)
      : epsilon_(epsilon), momentum_(momentum), training_(training) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() < 2) {
      return invalid_argument("X must have rank >= 2 ([N, C, ...]), got " +
                              shape_to_string(x->shape()));
    }
    const char* names[] = {"scale", "B", "mean", "var"};
    std::vector<double> p[4];
    const int64_t n = x->dim(0), c = x->dim(1);
    const int64_t spatial = n * c == 0 ? 0 : x->numel() / (n * c);
    bool per_activation = false;
    for (size_t i = 0; i < 4; ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i + 1));
      RECUR_ASSIGN_OR_RETURN(p[i], read_as_double(*t, names[i]));
      const int64_t size = t->numel();
      // spatial=0 (before opset 9): one statistic per activation, shape [C, D1, ...].
      if (size == c * spatial && spatial != 1 && t->rank() > 1) {
        per_activation = true;
      } else if (size != c) {
        return invalid_argument(std::string(names[i]) + " " + shape_to_string(t->shape()) +
                                " should have " + std::to_string(c) + " values (one per channel)");
      }
    }
    for (size_t i = 0; i < 4; ++i) {
      if (per_activation && static_cast<int64_t>(p[i].size()) != c * spatial) {
        return invalid_argument("with per-activation statistics every parameter must have " +
                                std::to_string(c * spatial) + " values");
      }
    }
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    const bool training = training_ || (ctx.node().opset < 14 && ctx.num_outputs() > 1 &&
                                        (ctx.output_requested(1) || ctx.output_requested(2)));
    const int64_t groups = per_activation ? c * spatial : c;
    std::vector<double> mean = p[2], var = p[3];
    std::vector<double> batch_mean(static_cast<size_t>(groups), 0.0),
        batch_var(static_cast<size_t>(groups), 0.0);
    auto group_of = [&](int64_t ci, int64_t s) { return per_activation ? ci * spatial + s : ci; };
    if (training) {
      std::vector<double> count(static_cast<size_t>(groups), 0.0);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t s = 0; s < spatial; ++s) {
            const auto g = static_cast<size_t>(group_of(ci, s));
            batch_mean[g] += xs[static_cast<size_t>((b * c + ci) * spatial + s)];
            count[g] += 1;
          }
      for (size_t g = 0; g < batch_mean.size(); ++g) batch_mean[g] /= count[g] > 0 ? count[g] : 1;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t s = 0; s < spatial; ++s) {
            const auto g = static_cast<size_t>(group_of(ci, s));
            const double d = xs[static_cast<size_t>((b * c + ci) * spatial + s)] - batch_mean[g];
            batch_var[g] += d * d;
          }
      for (size_t g = 0; g < batch_var.size(); ++g) batch_var[g] /= count[g] > 0 ? count[g] : 1;
    }
    const std::vector<double>& use_mean = training ? batch_mean : mean;
    const std::vector<double>& use_var = training ? batch_var : var;
    std::vector<double> ys(xs.size());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t s = 0; s < spatial; ++s) {
          const auto g = static_cast<size_t>(group_of(ci, s));
          const auto i = static_cast<size_t>((b * c + ci) * spatial + s);
          ys[i] = (xs[i] - use_mean[g]) / std::sqrt(use_var[g] + epsilon_) * p[0][g] + p[1][g];
        }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    write_from_double(ys, *y);
    if (training) {
      std::vector<double> running_mean(mean.size()), running_var(var.size());
      for (size_t g = 0; g < mean.size(); ++g) {
        running_mean[g] = mean[g] * momentum_ + batch_mean[g] * (1 - momentum_);
        running_var[g] = var[g] * momentum_ + batch_var[g] * (1 - momentum_);
      }
      const std::vector<double>* outs[] = {&running_mean, &running_var, &batch_mean, &batch_var};
      for (size_t o = 1; o < ctx.num_outputs() && o <= 4; ++o) {
        if (!ctx.output_requested(o)) continue;
        const Tensor* like = ctx.input(o <= 2 ? o + 2 : 3);
        RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(o, like->dtype(), like->shape()));
        write_from_double(*outs[o - 1], *t);
      }
    }
    return ok_status();
  }

 private:
  double epsilon_, momentum_;
  bool training_;
};

}  // namespace

void register_batch_normalization(Registrar& r) {
  r.add({.op_type = "BatchNormalization",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const double eps = r.get_float("epsilon", 1e-5f);
           const double momentum = r.get_float("momentum", 0.9f);
           const bool training = ctx.opset() >= 14 && r.get_int("training_mode", 0) != 0;
           RECUR_RETURN_IF_ERROR(r.status());
           return std::make_unique<BatchNormKernel>(eps, momentum, training);
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
