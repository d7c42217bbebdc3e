// Bernoulli: output i is 1 with probability input i and 0 otherwise, of the `dtype` attribute
// or else the input's dtype. A probability at or below 0 (or NaN) always gives 0, one at or
// above 1 always gives 1: the test is uniform < p, with the uniform in [0, 1).
#include <string>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/random/random_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

constexpr auto kBernoulliOut = kFloatTypes + kSignedIntTypes + kUnsignedIntTypes + TypeList<bool>{};
constexpr const char* kBernoulliOutNames =
    "float16, float32, float64, bfloat16, bool, or an 8- to 64-bit integer type";

bool bernoulli_out(DType t) {
  bool ok = false;
  visit_dtype(kBernoulliOut, t, [&](auto) { ok = true; });
  return ok;
}

// Why an input of dtype `dt` cannot hold the probabilities.
std::string probabilities_error(DType dt) {
  return std::string("the input holds probabilities and must be ") + kDrawFloats + ", not " +
         std::string(dtype_name(dt));
}

class BernoulliKernel final : public Kernel {
 public:
  BernoulliKernel(std::optional<DType> dtype, std::optional<uint64_t> seed)
      : dtype_(dtype), seed_(seed) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (!is_draw_float(x->dtype())) {
      return ctx.error(ErrorCode::kInvalidArgument, probabilities_error(x->dtype()));
    }
    const DType dt = dtype_.value_or(x->dtype());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, dt, x->shape()));
    const RandomDraw draw = next_draw(ctx, seed_);
    visit_dtype(kFloatTypes, x->dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      const In* p = x->data<In>();
      visit_dtype(kBernoulliOut, dt, [&](auto out_tag) {
        using Out = typename decltype(out_tag)::type;
        Out* y = out->data<Out>();
        for (int64_t i = 0; i < x->numel(); ++i) {
          const bool one =
              draw.uniform(static_cast<uint64_t>(i)) < static_cast<double>(to_compute(p[i]));
          if constexpr (std::is_same_v<Out, bool>) {
            y[i] = one;
          } else {
            y[i] = from_compute<Out>(one ? 1 : 0);
          }
        }
      });
    });
    return ok_status();
  }

 private:
  std::optional<DType> dtype_;
  std::optional<uint64_t> seed_;
};

Result<std::unique_ptr<Kernel>> create_bernoulli(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(std::optional<DType> dtype,
                         dtype_attr(ctx.node(), bernoulli_out, kBernoulliOutNames));
  RECUR_ASSIGN_OR_RETURN(std::optional<uint64_t> seed, seed_attr(ctx.node()));
  return std::make_unique<BernoulliKernel>(dtype, seed);
}

Status infer_bernoulli(InferContext& ctx) {
  auto dtype = dtype_attr(ctx.node(), bernoulli_out, kBernoulliOutNames);
  if (!dtype.ok()) return dtype.status();
  const TypeInfo& in = ctx.input_type(0);
  if (in.dtype != DType::kUndefined && !is_draw_float(in.dtype)) {
    return ctx.error(probabilities_error(in.dtype));
  }
  ctx.set_output(0, TypeInfo{dtype->value_or(in.dtype), in.shape});
  return ok_status();
}

}  // namespace

void register_bernoulli(Registrar& r) {
  r.add({.op_type = "Bernoulli", .since = 15, .create = create_bernoulli}, infer_bernoulli);
}

}  // namespace recur::reference
