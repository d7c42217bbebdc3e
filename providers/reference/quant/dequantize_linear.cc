// DequantizeLinear (opsets 10, 13): y = (x - zero_point) * scale in float32, per tensor or
// (opset 13) per axis.
#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

namespace {

class DequantizeLinearKernel final : public Kernel {
 public:
  explicit DequantizeLinearKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    const Tensor* zp = ctx.input(2);
    if (zp && zp->dtype() != x->dtype()) {
      return invalid_argument("x_zero_point must have the dtype of x");
    }
    if (ctx.node().opset < 13 && scale->numel() != 1) {
      return invalid_argument("x_scale must be a scalar before opset 13");
    }
    RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> xs, read_quantized(*x, "x"));
    RECUR_ASSIGN_OR_RETURN(AxisQuant q, axis_quant(*scale, zp, x->shape(), axis_));
    if (x->dtype() == DType::kInt32) {
      for (int32_t z : q.zero_point) {
        if (z != 0) return invalid_argument("the zero point of int32 input must be 0");
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    float* yp = y->data<float>();
    for (int64_t i = 0; i < x->numel(); ++i) {
      const size_t k = q.index(i);
      yp[i] =
          (static_cast<float>(xs[static_cast<size_t>(i)]) - static_cast<float>(q.zero_point[k])) *
          q.scale[k];
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_dequantize_linear(Registrar& r) {
  r.add({.op_type = "DequantizeLinear",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t axis = r.get_int("axis", 1);
           RECUR_RETURN_IF_ERROR(r.status());
           return std::make_unique<DequantizeLinearKernel>(axis);
         }},
        [](InferContext& ctx) {
          TypeInfo t = ctx.input_type(0);
          t.dtype = DType::kFloat32;
          ctx.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
