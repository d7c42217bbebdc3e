// Erf of float32 on AVX-512 (avx512::erf16, a rational approximation fitted for it): oneDNN
// 2.6 has erf only inside its GELU. What exporters leave outside a GELU pattern (a GELU
// written differently, erf-based activations of their own) lands here. One thread: the loop
// runs at memory speed, about 16 floats a cycle's worth of work.
#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"

namespace recur::onednn {

namespace {

class ErfKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "the input is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN Erf runs float32 on the host");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    avx512::unary(avx512::Unary::kErf, x->data<float>(), x->numel(), y->data<float>());
    return ok_status();
  }
};

}  // namespace

void register_erf(KernelRegistry& r) {
  r.add({.op_type = "Erf",
         .since = 9,
         .create = [](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::unique_ptr<Kernel>(std::make_unique<ErfKernel>());
         },
         .claim = [](const Node& n, const Graph& g) -> Claim {
           if (!avx512::have_avx512()) return Claim::decline("this processor has no AVX-512");
           return claim_float32_input(n, g);
         }});
}

}  // namespace recur::onednn
