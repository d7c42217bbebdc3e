// ConvInteger (opset 10): int32 convolution of uint8/int8 inputs less their zero points.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class ConvIntegerKernel final : public Kernel {
 public:
  ConvIntegerKernel(WindowAttrs a, int64_t group) : a_(std::move(a)), group_(group) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(QuantConv q,
                           quantized_conv(a_, group_, *x, ctx.input(2), *w, ctx.input(3)));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt32, q.shapes.y));
    copy_bytes(y->raw_data(), q.acc.data(), q.acc.size() * sizeof(int32_t));
    return ok_status();
  }

 private:
  WindowAttrs a_;
  int64_t group_;
};

}  // namespace

Result<std::pair<WindowAttrs, int64_t>> read_conv_attrs(const Node& node) {
  RECUR_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(node));
  AttrReader r(node);
  const int64_t group = r.get_int("group", 1);
  RECUR_RETURN_IF_ERROR(r.status());
  if (group <= 0) return invalid_model(node.describe() + ": group must be positive");
  return std::make_pair(std::move(a), group);
}

void register_conv_integer(Registrar& r) {
  r.add({.op_type = "ConvInteger",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(auto a, read_conv_attrs(ctx.node()));
           return std::make_unique<ConvIntegerKernel>(std::move(a.first), a.second);
         }},
        [](InferContext& ctx) { return infer_conv_like(ctx, DType::kInt32); });
}

}  // namespace recur::reference
