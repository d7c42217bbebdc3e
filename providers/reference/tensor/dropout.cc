// Dropout at inference: the output is the input (a view) and the mask is all true (all ones
// of the input's dtype before opset 10). From opset 12, training_mode=true with a nonzero ratio
// asks for random dropping, which recur does not do.
#include <cstring>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

DType mask_dtype(int opset, DType data) { return opset < 10 ? data : DType::kBool; }

class DropoutKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const int opset = ctx.node().opset;
    if (opset >= 12) {
      if (const Tensor* t = ctx.input(2)) {
        auto training = read_scalar_double(*t, "training_mode");
        if (!training.ok()) return training.status().with_context(ctx.node().describe());
        double ratio = 0.5;
        if (const Tensor* r = ctx.input(1)) {
          auto v = read_scalar_double(*r, "ratio");
          if (!v.ok()) return v.status().with_context(ctx.node().describe());
          ratio = *v;
        }
        if (*training != 0 && ratio != 0) {
          return ctx.error(ErrorCode::kNotImplemented,
                           "training_mode=true with ratio " + std::to_string(ratio) +
                               " drops elements at random; recur runs inference only");
        }
      }
    }
    RECUR_RETURN_IF_ERROR(ctx.set_output(0, *x));
    if (!ctx.output_requested(1)) return ok_status();
    const DType md = mask_dtype(opset, x->dtype());
    RECUR_ASSIGN_OR_RETURN(Tensor * mask, ctx.allocate_output(1, md, x->shape()));
    const bool ok = visit_dtype(kAllTypes, md, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = mask->data<T>();
      T one;
      if constexpr (std::is_same_v<T, bool>) {
        one = true;
      } else {
        one = from_compute<T>(1);
      }
      for (int64_t i = 0; i < mask->numel(); ++i) p[i] = one;
    });
    if (!ok) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(md)) + " is not supported");
    }
    return ok_status();
  }
};

Status infer_dropout(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  ctx.set_output(0, in);
  ctx.set_output(1, TypeInfo{mask_dtype(ctx.opset(), in.dtype), in.shape});
  return ok_status();
}

}  // namespace

void register_dropout(Registrar& r) {
  r.add({.op_type = "Dropout", .since = 1, .create = make_simple<DropoutKernel>()}, infer_dropout);
}

}  // namespace recur::reference
