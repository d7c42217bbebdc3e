// QLinearMatMul (opset 10): quantised matmul,
// y = saturate(round(sum (a - a_zp)(b - b_zp) * a_scale * b_scale / y_scale) + y_zp), with
// per-tensor or per-row (a) and per-column (b) scales.
#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

namespace {

class QLinearMatMulKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* in[8];
    for (size_t i = 0; i < 8; ++i) {
      RECUR_ASSIGN_OR_RETURN(in[i], required_input(ctx, i));
    }
    RECUR_ASSIGN_OR_RETURN(QuantMatMul q, quantized_matmul(*in[0], in[2], *in[3], in[5]));
    const MatMulShapes& s = q.shapes;
    RECUR_ASSIGN_OR_RETURN(std::vector<float> as, read_float32(*in[1], "a_scale"));
    RECUR_ASSIGN_OR_RETURN(std::vector<float> bs, read_float32(*in[4], "b_scale"));
    RECUR_ASSIGN_OR_RETURN(std::vector<float> ys, read_float32(*in[6], "y_scale"));
    RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> yz, read_quantized(*in[7], "y_zero_point"));
    if ((as.size() != 1 && static_cast<int64_t>(as.size()) != s.m) ||
        (bs.size() != 1 && static_cast<int64_t>(bs.size()) != s.n) || ys.size() != 1 ||
        yz.size() != 1) {
      return invalid_argument(
          "a_scale must have 1 or M values, b_scale 1 or N, and y_scale and "
          "y_zero_point one each");
    }
    const DType out = in[7]->dtype();
    if (out != DType::kUInt8 && out != DType::kInt8) {
      return invalid_argument("y_zero_point must be uint8 or int8");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, s.y));
    auto fill = [&](auto* yp) {
      using Q = std::remove_pointer_t<decltype(yp)>;
      for (size_t i = 0; i < q.acc.size(); ++i) {
        const int64_t n = static_cast<int64_t>(i) % s.n;
        const int64_t m = (static_cast<int64_t>(i) / s.n) % s.m;
        const float mult = as[as.size() == 1 ? 0 : static_cast<size_t>(m)] *
                           bs[bs.size() == 1 ? 0 : static_cast<size_t>(n)] / ys[0];
        yp[i] = saturate_round<Q>(std::nearbyint(static_cast<float>(q.acc[i]) * mult) +
                                  static_cast<float>(yz[0]));
      }
    };
    if (out == DType::kUInt8) {
      fill(y->data<uint8_t>());
    } else {
      fill(y->data<int8_t>());
    }
    return ok_status();
  }
};

}  // namespace

void register_qlinear_matmul(Registrar& r) {
  r.add({.op_type = "QLinearMatMul", .since = 10, .create = make_simple<QLinearMatMulKernel>()},
        [](InferContext& ctx) { return infer_matmul_like(ctx, ctx.input_type(7).dtype, 0, 3); });
}

}  // namespace recur::reference
