// Momentum (ai.onnx.preview.training, opset 1): g' = norm_coefficient * x + g;
// v' = alpha * v + beta' * g' with beta' = beta when T > 0, else 1; x' = x - R * v' (mode
// "standard") or x - R * (g' + alpha * v') (mode "nesterov").
#include "providers/reference/training/training_ops.h"

namespace recur::reference {

namespace {

class MomentumKernel final : public Kernel {
 public:
  MomentumKernel(double alpha, double beta, double norm, bool nesterov)
      : alpha_(alpha), beta_(beta), norm_(norm), nesterov_(nesterov) {}

  Status run(KernelContext& ctx) const override {
    return run_optimizer(ctx, 1, [this](double r, int64_t t, double& x, double g, double* v) {
      const double gr = norm_ * x + g;
      v[0] = alpha_ * v[0] + (t > 0 ? beta_ : 1.0) * gr;
      x -= nesterov_ ? r * (gr + alpha_ * v[0]) : r * v[0];
    });
  }

 private:
  double alpha_, beta_, norm_;
  bool nesterov_;
};

}  // namespace

void register_momentum(Registrar& r) {
  r.add({.op_type = "Momentum",
         .domain = kTrainingDomain,
         .since = 1,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const double alpha = attrs.get_float("alpha", 0.0f);
           const double beta = attrs.get_float("beta", 0.0f);
           const double norm = attrs.get_float("norm_coefficient", 0.0f);
           const std::string mode = attrs.get_string("mode", "");
           for (const char* required : {"alpha", "beta", "norm_coefficient", "mode"}) {
             if (!attrs.has(required)) {
               return c.error(ErrorCode::kInvalidModel,
                              std::string("missing attribute ") + required);
             }
           }
           RECUR_RETURN_IF_ERROR(attrs.status());
           if (mode != "standard" && mode != "nesterov") {
             return c.error(ErrorCode::kInvalidModel,
                            "mode '" + mode + "' is not standard or nesterov");
           }
           return std::make_unique<MomentumKernel>(alpha, beta, norm, mode == "nesterov");
         }});
}

}  // namespace recur::reference
