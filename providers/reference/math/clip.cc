// Clip: min and max as attributes before opset 11 (absent: unbounded), as optional scalar
// inputs from opset 11 (integer types from 12). NaN propagates from the input and the bounds,
// as numpy.clip's does; with min > max every value becomes max.
#include <optional>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

class ClipKernel final : public Kernel {
 public:
  ClipKernel(std::optional<float> min, std::optional<float> max) : min_(min), max_(max) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const Tensor* lo = nullptr;
    const Tensor* hi = nullptr;
    if (ctx.node().opset >= 11) {
      lo = ctx.input(1);
      hi = ctx.input(2);
      for (const Tensor* b : {lo, hi}) {
        if (!b) continue;
        const char* what = b == lo ? "min" : "max";
        if (b->dtype() != x->dtype())
          return dtype_mismatch(ctx, what, b->dtype(), "input", x->dtype());
        if (b->numel() != 1) {
          return ctx.error(
              ErrorCode::kInvalidArgument,
              std::string(what) + " must be a scalar, not " + shape_to_string(b->shape()));
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), x->shape()));
    const bool handled = visit_dtype(kNumericTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      std::optional<C> vlo, vhi;
      if (lo) vlo = to_compute(lo->data<T>()[0]);
      if (hi) vhi = to_compute(hi->data<T>()[0]);
      if (min_) vlo = convert<C>(*min_);
      if (max_) vhi = convert<C>(*max_);
      const T* px = x->data<T>();
      T* po = out->data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        C v = to_compute(px[i]);
        if (vlo) v = nan_max(v, *vlo);
        if (vhi) v = nan_min(v, *vhi);
        po[i] = from_compute<T>(v);
      }
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }

 private:
  std::optional<float> min_, max_;  // the attributes of opsets < 11
};

Result<std::unique_ptr<Kernel>> create_clip(CompileContext& ctx) {
  std::optional<float> min, max;
  if (ctx.opset() < 11) {
    AttrReader attrs(ctx.node());
    if (attrs.has("min")) min = attrs.get_float("min", 0.0f);
    if (attrs.has("max")) max = attrs.get_float("max", 0.0f);
    RECUR_RETURN_IF_ERROR(attrs.status());
  }
  return std::make_unique<ClipKernel>(min, max);
}

}  // namespace

void register_clip(Registrar& r) {
  r.add({.op_type = "Clip", .since = 1, .create = create_clip}, infer_same_as_input0);
}

}  // namespace recur::reference
