#include "providers/onednn/math/avx512_unary.h"

#include <string>

#include "providers/onednn/common/prim_cache.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn {

namespace {

class Avx512UnaryKernel final : public Kernel {
 public:
  Avx512UnaryKernel(avx512::Unary f, std::string op, float alpha, float beta)
      : f_(f), op_(std::move(op)), alpha_(alpha), beta_(beta) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "the input is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "the oneDNN " + op_ + " runs float32 on the host");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    avx512::unary(f_, x->data<float>(), x->numel(), y->data<float>(), alpha_, beta_);
    return ok_status();
  }
  uint32_t overwritable_inputs() const override { return 1; }  // avx512::unary: element by element

 private:
  avx512::Unary f_;
  std::string op_;
  float alpha_, beta_;
};

}  // namespace

void register_avx512_unary(KernelRegistry& r, const char* op, int since, avx512::Unary f,
                           UnaryAttr alpha, UnaryAttr beta) {
  r.add({.op_type = op,
         .since = since,
         .create = [f, op, alpha, beta](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           auto read = [&a](UnaryAttr u) {
             return u.name ? a.get_float(u.name, u.fallback) : u.fallback;
           };
           const float av = read(alpha), bv = read(beta);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::unique_ptr<Kernel>(std::make_unique<Avx512UnaryKernel>(f, op, av, bv));
         },
         .claim = [](const Node& n, const Graph& g) -> Claim {
           if (!avx512::have_avx512()) return Claim::decline(cpu::why_not(cpu::Feature::kAvx512));
           return claim_float32_input(n, g);
         }});
}

}  // namespace recur::onednn
