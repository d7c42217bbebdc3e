// DynamicQuantizeLinear (opset 11): uint8 quantisation with a scale and zero point computed
// from the data's range (extended to include 0), in float32 as the ONNX function body does.
#include <algorithm>

#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

namespace {

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(std::vector<float> xs, read_float32(*x, "x"));
    float lo = 0.0f, hi = 0.0f;
    for (float v : xs) {
      if (std::isnan(v)) return invalid_argument("x contains NaN");
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const float scale = (hi - lo) / 255.0f;
    uint8_t zp = 0;
    if (scale > 0) zp = saturate_round<uint8_t>(0.0f - lo / scale);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kUInt8, x->shape()));
    uint8_t* yp = y->data<uint8_t>();
    for (size_t i = 0; i < xs.size(); ++i) {
      yp[i] = scale > 0
                  ? saturate_round<uint8_t>(std::nearbyint(xs[i] / scale) + static_cast<float>(zp))
                  : zp;
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * ys, ctx.allocate_output(1, DType::kFloat32, {}));
    *ys->data<float>() = scale;
    RECUR_ASSIGN_OR_RETURN(Tensor * yz, ctx.allocate_output(2, DType::kUInt8, {}));
    *yz->data<uint8_t>() = zp;
    return ok_status();
  }
};

}  // namespace

void register_dynamic_quantize_linear(Registrar& r) {
  r.add({.op_type = "DynamicQuantizeLinear",
         .since = 11,
         .create = make_simple<DynamicQuantizeLinearKernel>()},
        [](InferContext& ctx) {
          TypeInfo t = ctx.input_type(0);
          t.dtype = DType::kUInt8;
          ctx.set_output(0, t);
          ctx.set_output(1, TypeInfo::of(DType::kFloat32, {}));
          ctx.set_output(2, TypeInfo::of(DType::kUInt8, {}));
          return ok_status();
        });
}

}  // namespace recur::reference
