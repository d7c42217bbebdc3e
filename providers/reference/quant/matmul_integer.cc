// MatMulInteger (opset 10): int32 products of uint8/int8 matrices less their zero points.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class MatMulIntegerKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(QuantMatMul q, quantized_matmul(*a, ctx.input(2), *b, ctx.input(3)));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt32, q.shapes.y));
    copy_bytes(y->raw_data(), q.acc.data(), q.acc.size() * sizeof(int32_t));
    return ok_status();
  }
};

}  // namespace

void register_matmul_integer(Registrar& r) {
  r.add({.op_type = "MatMulInteger", .since = 10, .create = make_simple<MatMulIntegerKernel>()},
        [](InferContext& ctx) { return infer_matmul_like(ctx, DType::kInt32, 0, 1); });
}

}  // namespace recur::reference
