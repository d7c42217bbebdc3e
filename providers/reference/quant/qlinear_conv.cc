// QLinearConv (opset 10): quantised convolution,
// y = saturate(round((sum (x - x_zp)(w - w_zp) + B) * x_scale * w_scale / y_scale) + y_zp),
// with per-tensor or per-output-channel w_scale and w_zero_point.
#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

Result<std::pair<WindowAttrs, int64_t>> read_conv_attrs(const Node& node);  // conv_integer.cc

namespace {

class QLinearConvKernel final : public Kernel {
 public:
  QLinearConvKernel(WindowAttrs a, int64_t group) : a_(std::move(a)), group_(group) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* in[8];
    for (size_t i = 0; i < 8; ++i) {
      RECUR_ASSIGN_OR_RETURN(in[i], required_input(ctx, i));
    }
    const Tensor* bias = ctx.input(8);
    RECUR_ASSIGN_OR_RETURN(QuantConv q, quantized_conv(a_, group_, *in[0], in[2], *in[3], in[5]));
    const ConvShapes& s = q.shapes;
    RECUR_ASSIGN_OR_RETURN(std::vector<float> xs, read_float32(*in[1], "x_scale"));
    RECUR_ASSIGN_OR_RETURN(std::vector<float> ws, read_float32(*in[4], "w_scale"));
    RECUR_ASSIGN_OR_RETURN(std::vector<float> ys, read_float32(*in[6], "y_scale"));
    RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> yz, read_quantized(*in[7], "y_zero_point"));
    if (xs.size() != 1 || ys.size() != 1 || yz.size() != 1 ||
        (ws.size() != 1 && static_cast<int64_t>(ws.size()) != s.m)) {
      return invalid_argument(
          "x_scale, y_scale and y_zero_point must be scalars, w_scale a "
          "scalar or one value per output channel");
    }
    std::vector<int32_t> b(static_cast<size_t>(s.m), 0);
    if (bias) {
      if (bias->dtype() != DType::kInt32 || bias->numel() != s.m) {
        return invalid_argument("B must be int32 with " + std::to_string(s.m) + " values");
      }
      RECUR_ASSIGN_OR_RETURN(b, read_quantized(*bias, "B"));
    }
    const DType out = in[7]->dtype();
    if (out != DType::kUInt8 && out != DType::kInt8) {
      return invalid_argument("y_zero_point must be uint8 or int8");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, s.y));
    const int64_t P = s.win.out_size();
    auto fill = [&](auto* yp) {
      using Q = std::remove_pointer_t<decltype(yp)>;
      for (size_t i = 0; i < q.acc.size(); ++i) {
        const auto m = static_cast<size_t>((static_cast<int64_t>(i) / P) % s.m);
        const float mult = xs[0] * ws[ws.size() == 1 ? 0 : m] / ys[0];
        const float v = static_cast<float>(static_cast<int64_t>(q.acc[i]) + b[m]) * mult;
        yp[i] = saturate_round<Q>(std::nearbyint(v) + static_cast<float>(yz[0]));
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
  WindowAttrs a_;
  int64_t group_;
};

}  // namespace

void register_qlinear_conv(Registrar& r) {
  r.add({.op_type = "QLinearConv",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(auto a, read_conv_attrs(ctx.node()));
           return std::make_unique<QLinearConvKernel>(std::move(a.first), a.second);
         }},
        [](InferContext& ctx) {
          const DType out = ctx.num_inputs() > 7 ? ctx.input_type(7).dtype : DType::kUInt8;
          return infer_conv_like(ctx, out, 3);
        });
}

}  // namespace recur::reference
