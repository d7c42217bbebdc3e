// PRelu: x < 0 ? slope * x : x, with slope broadcast to X (unidirectionally: the output has
// X's shape). Before opset 7 the slope was Caffe2's: one value, or one per channel (axis 1),
// which is how the PyTorch exporter of that time wrote it ([C] against [N,C,...]).
#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

class PReluKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* slope, required_input(ctx, 1));
    if (x->dtype() != slope->dtype()) {
      return dtype_mismatch(ctx, "X", x->dtype(), "slope", slope->dtype());
    }
    BinaryShapes s{x->shape(), slope->shape(), x->shape()};
    if (ctx.node().opset < 7 && slope->numel() == 1) {
      s.b = {};
    } else if (ctx.node().opset < 7 && slope->rank() == 1 && x->rank() >= 2 &&
               slope->dim(0) == x->dim(1)) {
      s.b = Shape(static_cast<size_t>(x->rank() - 1), 1);
      s.b[0] = slope->dim(0);
    }
    auto out_shape = broadcast_shapes({s.a, s.b});
    if (!out_shape.ok() || *out_shape != x->shape()) {
      return ctx.error(ErrorCode::kInvalidArgument, "slope " + shape_to_string(slope->shape()) +
                                                        " does not broadcast to X " +
                                                        shape_to_string(x->shape()));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), x->shape()));
    const bool handled = visit_dtype(kNumericTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      broadcast_binary<T, T, T>(*x, *slope, *out, s, [](T v, T a) -> T {
        if constexpr (std::is_integral_v<T>) {
          return v < T(0) ? wrap_mul(a, v) : v;
        } else {
          const compute_t<T> cv = to_compute(v);
          return cv < 0 ? from_compute<T>(to_compute(a) * cv) : v;
        }
      });
    });
    if (!handled) return unsupported_dtype(ctx, x->dtype());
    return ok_status();
  }
};

}  // namespace

void register_prelu(Registrar& r) {
  r.add({.op_type = "PRelu", .since = 1, .create = make_simple<PReluKernel>()},
        infer_same_as_input0);
}

}  // namespace recur::reference
