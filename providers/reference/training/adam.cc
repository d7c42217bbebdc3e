// Adam (ai.onnx.preview.training, opset 1): g' = norm_coefficient * x + g;
// v' = alpha * v + (1 - alpha) * g'; h' = beta * h + (1 - beta) * g'^2;
// r' = R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R;
// x' = (1 - norm_coefficient_post) * (x - r' * v' / (sqrt(h') + epsilon)).
#include <cmath>

#include "providers/reference/training/training_ops.h"

namespace recur::reference {

namespace {

class AdamKernel final : public Kernel {
 public:
  AdamKernel(double alpha, double beta, double epsilon, double norm, double norm_post)
      : alpha_(alpha), beta_(beta), epsilon_(epsilon), norm_(norm), norm_post_(norm_post) {}

  Status run(KernelContext& ctx) const override {
    return run_optimizer(ctx, 2, [this](double r, int64_t t, double& x, double g, double* s) {
      double& v = s[0];
      double& h = s[1];
      const double gr = norm_ * x + g;
      v = alpha_ * v + (1.0 - alpha_) * gr;
      h = beta_ * h + (1.0 - beta_) * gr * gr;
      const double td = static_cast<double>(t);
      const double rate =
          t > 0 ? r * std::sqrt(1.0 - std::pow(beta_, td)) / (1.0 - std::pow(alpha_, td)) : r;
      x = (1.0 - norm_post_) * (x - rate * v / (std::sqrt(h) + epsilon_));
    });
  }

 private:
  double alpha_, beta_, epsilon_, norm_, norm_post_;
};

}  // namespace

void register_adam(Registrar& r) {
  r.add({.op_type = "Adam",
         .domain = kTrainingDomain,
         .since = 1,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const double alpha = attrs.get_float("alpha", 0.9f);
           const double beta = attrs.get_float("beta", 0.999f);
           const double epsilon = attrs.get_float("epsilon", 1e-6f);
           const double norm = attrs.get_float("norm_coefficient", 0.0f);
           const double norm_post = attrs.get_float("norm_coefficient_post", 0.0f);
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<AdamKernel>(alpha, beta, epsilon, norm, norm_post);
         }});
}

}  // namespace recur::reference
