// QuantizeLinear (opsets 10, 13): y = saturate(round_half_even(x / scale) + zero_point),
// per tensor or (opset 13) per axis. y has the zero point's type, uint8 by default.
#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

namespace {

class QuantizeLinearKernel final : public Kernel {
 public:
  explicit QuantizeLinearKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    const Tensor* zp = ctx.input(2);
    const DType out = zp ? zp->dtype() : DType::kUInt8;
    if (out != DType::kUInt8 && out != DType::kInt8) {
      return invalid_argument("y_zero_point must be uint8 or int8, not " +
                              std::string(dtype_name(out)));
    }
    if (ctx.node().opset < 13 && scale->numel() != 1) {
      return invalid_argument("y_scale must be a scalar before opset 13");
    }
    RECUR_ASSIGN_OR_RETURN(AxisQuant q, axis_quant(*scale, zp, x->shape(), axis_));
    std::vector<float> xs(static_cast<size_t>(x->numel()));
    if (x->dtype() == DType::kFloat32) {
      const float* p = x->data<float>();
      xs.assign(p, p + x->numel());
    } else if (x->dtype() == DType::kInt32) {
      const int32_t* p = x->data<int32_t>();
      for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(p[i]);
    } else {
      return invalid_argument("x must be float32 or int32, not " +
                              std::string(dtype_name(x->dtype())));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x->shape()));
    auto fill = [&](auto* yp) {
      using Q = std::remove_pointer_t<decltype(yp)>;
      for (int64_t i = 0; i < x->numel(); ++i) {
        const size_t k = q.index(i);
        const float v = std::nearbyint(xs[static_cast<size_t>(i)] / q.scale[k]) +
                        static_cast<float>(q.zero_point[k]);
        yp[i] = saturate_round<Q>(v);
      }
    };
    if (out == DType::kUInt8) {
      fill(y->data<uint8_t>());
    } else {
      fill(y->data<int8_t>());
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_quantize_linear(Registrar& r) {
  r.add({.op_type = "QuantizeLinear",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t axis = r.get_int("axis", 1);
           RECUR_RETURN_IF_ERROR(r.status());
           return std::make_unique<QuantizeLinearKernel>(axis);
         }},
        [](InferContext& ctx) {
          TypeInfo t = ctx.input_type(0);
          t.dtype = ctx.has_input(2) ? ctx.input_type(2).dtype : DType::kUInt8;
          ctx.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
