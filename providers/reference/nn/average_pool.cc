// AveragePool (opsets 1, 7, 10, 11, 19, 22): N-d average pooling with count_include_pad,
// ceil_mode, pads, auto_pad and (opset 19) dilations.
#include "providers/reference/common/last_plan.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class AveragePoolKernel final : public Kernel {
 public:
  AveragePoolKernel(WindowAttrs a, bool count_include_pad)
      : a_(std::move(a)), count_include_pad_(count_include_pad) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(PoolShapes s, resolve_pool(a_, x->shape()));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s.y));
    RECUR_ASSIGN_OR_RETURN(auto kept, plan_.get(x->shape(), [&]() -> Result<PoolPlan> {
      return make_pool_plan(s.win);
    }));
    const PoolPlan& plan = *kept;
    const int64_t P = s.win.out_size();
    // count_include_pad divides by the window clipped at the end padding, as PyTorch (which
    // exports most pooling models) and ONNX Runtime do. ONNX's own reference divides by the
    // whole window where a ceil_mode window reaches past the padding; the one backend test
    // that differs (averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True)
    // is a listed expected failure.
    const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* yp = y->data<T>();
      for_each_pool_window(
          s, plan, x->data<T>(), [&](const T* xc, const PoolWindow& w, int64_t nc, int64_t p) {
            double sum = 0;
            w.for_each_tap([&](int64_t off) {
              sum += static_cast<double>(static_cast<compute_t<T>>(xc[off]));
            });
            const int64_t count = count_include_pad_ ? w.padded_count() : w.tap_count();
            yp[nc * P + p] = static_cast<T>(
                static_cast<compute_t<T>>(count > 0 ? sum / static_cast<double>(count) : 0.0));
          });
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
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
