// Adagrad (ai.onnx.preview.training, opset 1): r' = R / (1 + T * decay_factor);
// g' = norm_coefficient * x + g; h' = h + g'^2; x' = x - r' * g' / (sqrt(h') + epsilon).
#include <cmath>

#include "providers/reference/training/training_ops.h"

namespace recur::reference {

namespace {

class AdagradKernel final : public Kernel {
 public:
  AdagradKernel(double decay, double epsilon, double norm)
      : decay_(decay), epsilon_(epsilon), norm_(norm) {}

  Status run(KernelContext& ctx) const override {
    return run_optimizer(ctx, 1, [this](double r, int64_t t, double& x, double g, double* h) {
      const double rate = r / (1.0 + static_cast<double>(t) * decay_);
      const double gr = norm_ * x + g;
      h[0] += gr * gr;
      x -= rate * gr / (std::sqrt(h[0]) + epsilon_);
    });
  }

 private:
  double decay_, epsilon_, norm_;
};

}  // namespace

void register_adagrad(Registrar& r) {
  r.add({.op_type = "Adagrad",
         .domain = kTrainingDomain,
         .since = 1,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const double decay = attrs.get_float("decay_factor", 0.0f);
           const double epsilon = attrs.get_float("epsilon", 1e-6f);
           const double norm = attrs.get_float("norm_coefficient", 0.0f);
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<AdagradKernel>(decay, epsilon, norm);
         }});
}

}  // namespace recur::reference
