// Dropout. At inference (before opset 12 always; from 12 unless training_mode is true) the
// output is the input (a view) and the mask is all true (all ones of the input's dtype before
// opset 10). In training mode each element is kept with probability 1 - ratio, drawn anew on
// every run unless the node's `seed` or the session's seed fixes the draws
// (SessionOptions::random_seed): y = x * mask / (1 - ratio). PyTorch exports
// F.dropout(training=True), which TTS prenets keep at inference, this way.
#include <cstring>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/random/random_ops.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

DType mask_dtype(int opset, DType data) { return opset < 10 ? data : DType::kBool; }

// The ratio and training mode of a run; training with a ratio of 0 is inference.
struct DropoutMode {
  bool training = false;
  double ratio = 0.5;
};

Result<DropoutMode> dropout_mode(const KernelContext& ctx) {
  DropoutMode m;
  if (ctx.node().opset < 12) return m;
  if (const Tensor* t = ctx.input(2)) {
    RECUR_ASSIGN_OR_RETURN(const double training, read_scalar_double(*t, "training_mode"));
    m.training = training != 0;
  }
  if (const Tensor* r = ctx.input(1)) {
    RECUR_ASSIGN_OR_RETURN(m.ratio, read_scalar_double(*r, "ratio"));
  }
  if (m.training && !(m.ratio >= 0 && m.ratio <= 1)) {
    return invalid_argument("ratio " + std::to_string(m.ratio) + " is outside [0, 1]");
  }
  m.training = m.training && m.ratio != 0;
  return m;
}

class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(std::optional<uint64_t> seed) : seed_(seed) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    auto mode = dropout_mode(ctx);
    if (!mode.ok()) return mode.status().with_context(ctx.node().describe());
    if (mode->training) return run_training(ctx, *x, mode->ratio);
    RECUR_RETURN_IF_ERROR(ctx.set_output(0, *x));
    if (!ctx.output_requested(1)) return ok_status();
    const DType md = mask_dtype(ctx.node().opset, x->dtype());
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

 private:
  // Element i is kept when the draw's uniform i is at least `ratio`, as in ONNX's reference;
  // a ratio of 1 drops everything (and scales nothing, so 0 * inf never makes a NaN).
  Status run_training(KernelContext& ctx, const Tensor& x, double ratio) const {
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    Tensor* mask = nullptr;
    if (ctx.output_requested(1)) {
      RECUR_ASSIGN_OR_RETURN(mask, ctx.allocate_output(1, DType::kBool, x.shape()));
    }
    const RandomDraw draw = next_draw(ctx, seed_);
    const double scale = ratio < 1 ? 1.0 / (1.0 - ratio) : 0.0;
    const bool ok = visit_dtype(kFloatTypes, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y->data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const bool keep = draw.uniform(static_cast<uint64_t>(i)) >= ratio;
        const auto v = static_cast<compute_t<T>>(to_compute(in[i]) * scale);
        out[i] = from_compute<T>(keep ? v : compute_t<T>(0));
        if (mask) mask->data<bool>()[i] = keep;
      }
    });
    if (!ok) {
      return ctx.error(ErrorCode::kInvalidArgument, std::string("training mode drops ") +
                                                        kDrawFloats + " values, not " +
                                                        std::string(dtype_name(x.dtype())));
    }
    return ok_status();
  }

  std::optional<uint64_t> seed_;
};

Result<std::unique_ptr<Kernel>> create_dropout(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(std::optional<uint64_t> seed, seed_attr(ctx.node()));
  return std::make_unique<DropoutKernel>(seed);
}

Status infer_dropout(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  ctx.set_output(0, in);
  ctx.set_output(1, TypeInfo{mask_dtype(ctx.opset(), in.dtype), in.shape});
  return ok_status();
}

}  // namespace

void register_dropout(Registrar& r) {
  r.add({.op_type = "Dropout", .since = 1, .create = create_dropout}, infer_dropout);
}

}  // namespace recur::reference
