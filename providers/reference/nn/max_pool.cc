// MaxPool (opsets 1, 8, 10, 11, 12): N-d max pooling with the optional Indices output
// (storage_order), dilations, ceil_mode, pads and auto_pad; int8/uint8 since opset 12.
#include <limits>

#include "providers/reference/common/last_plan.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

constexpr auto kMaxPoolTypes = kNnFloatTypes + TypeList<int8_t, uint8_t>{};

class MaxPoolKernel final : public Kernel {
 public:
  MaxPoolKernel(WindowAttrs a, int64_t storage_order)
      : a_(std::move(a)), storage_order_(storage_order) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(PoolShapes s, resolve_pool(a_, x->shape()));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s.y));
    int64_t* ind = nullptr;
    if (ctx.output_requested(1)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * it, ctx.allocate_output(1, DType::kInt64, s.y));
      ind = it->data<int64_t>();
    }
    RECUR_ASSIGN_OR_RETURN(auto kept, plan_.get(x->shape(), [&]() -> Result<PoolPlan> {
      return make_pool_plan(s.win);
    }));
    const PoolPlan& plan = *kept;
    const int64_t in_size = s.win.in_size(), P = s.win.out_size();
    // Column-major strides of the input's spatial dimensions, for storage_order=1.
    const size_t r = s.win.rank();
    Shape row_stride(r, 1), col_stride(r, 1);
    for (size_t i = r; i-- > 1;) row_stride[i - 1] = row_stride[i] * s.win.in[i];
    for (size_t i = 1; i < r; ++i) col_stride[i] = col_stride[i - 1] * s.win.in[i - 1];
    auto spatial_index = [&](int64_t off) {
      if (storage_order_ == 0) return off;
      int64_t idx = 0;
      for (size_t d = 0; d < r; ++d) {
        idx += (off / row_stride[d]) * col_stride[d];
        off %= row_stride[d];
      }
      return idx;
    };
    const bool handled = visit_dtype(kMaxPoolTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      T* yp = y->data<T>();
      for_each_pool_window(s, plan, x->data<T>(),
                           [&](const T* xc, const PoolWindow& w, int64_t nc, int64_t p) {
                             C best = std::numeric_limits<C>::lowest();
                             if constexpr (std::numeric_limits<C>::has_infinity) {
                               best = -std::numeric_limits<C>::infinity();
                             }
                             int64_t best_off = w.first();
                             w.for_each_tap([&](int64_t off) {
                               const C v = static_cast<C>(xc[off]);
                               if (v > best) {
                                 best = v;
                                 best_off = off;
                               }
                             });
                             yp[nc * P + p] = static_cast<T>(best);
                             if (ind) ind[nc * P + p] = nc * in_size + spatial_index(best_off);
                           });
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  WindowAttrs a_;
  int64_t storage_order_;
  LastPlan<Shape, PoolPlan> plan_;  // by the input's shape (the attributes are fixed)
};

}  // namespace

void register_max_pool(Registrar& r) {
  r.add({.op_type = "MaxPool",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(ctx.node()));
           AttrReader r(ctx.node());
           const int64_t storage_order = r.get_int("storage_order", 0);
           RECUR_RETURN_IF_ERROR(r.status());
           if (storage_order != 0 && storage_order != 1) {
             return ctx.error(ErrorCode::kInvalidModel, "storage_order must be 0 or 1");
           }
           if (a.kernel_shape.empty()) {
             return ctx.error(ErrorCode::kInvalidModel, "kernel_shape is required");
           }
           return std::make_unique<MaxPoolKernel>(std::move(a), storage_order);
         }},
        infer_pool);
}

}  // namespace recur::reference
