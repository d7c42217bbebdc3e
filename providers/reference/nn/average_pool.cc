// AveragePool (opsets 1, 7, 10, 11, 19, 22): N-d average pooling with count_include_pad,
// ceil_mode, pads, auto_pad and (opset 19) dilations.
#include "providers/reference/nn/float_pool.h"
#include "providers/reference/nn/nn_ops.h"

namespace recur::reference {

namespace {

class AveragePoolKernel final : public Kernel {
 public:
  AveragePoolKernel(WindowAttrs a, bool count_include_pad)
      : a_(std::move(a)), count_include_pad_(count_include_pad) {}

  Status run(KernelContext& ctx) const override {
    // count_include_pad divides by the window clipped at the end padding, as PyTorch (which
    // exports most pooling models) and ONNX Runtime do. ONNX's own reference divides by the
    // whole window where a ceil_mode window reaches past the padding; the one backend test
    // that differs (averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True)
    // is a listed expected failure.
    return run_float_pool(ctx, a_, plan_, [&](auto&& sum_of, const PoolWindow& w) {
      const double sum = sum_of([](double v) { return v; });
      const int64_t count = count_include_pad_ ? w.padded_count() : w.tap_count();
      return count > 0 ? sum / static_cast<double>(count) : 0.0;
    });
  }

 private:
  WindowAttrs a_;
  bool count_include_pad_;
  LastPlan<Shape, PoolPlan> plan_;  // by the input's shape (the attributes are fixed)
};

}  // namespace

void register_average_pool(Registrar& r) {
  r.add({.op_type = "AveragePool",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(ctx.node()));
           AttrReader r(ctx.node());
           const bool include = r.get_int("count_include_pad", 0) != 0;
           RECUR_RETURN_IF_ERROR(r.status());
           if (a.kernel_shape.empty()) {
             return ctx.error(ErrorCode::kInvalidModel, "kernel_shape is required");
           }
           return std::make_unique<AveragePoolKernel>(std::move(a), include);
         }},
        infer_pool);
}

}  // namespace recur::reference
