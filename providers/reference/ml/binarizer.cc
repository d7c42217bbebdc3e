// Binarizer (ai.onnx.ml 1): Y = 1 where X > threshold, else 0, in X's dtype (NaN gives 0).
#include <string>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class BinarizerKernel final : public Kernel {
 public:
  explicit BinarizerKernel(double threshold) : threshold_(threshold) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    constexpr TypeList<float, double, int64_t, int32_t> kTypes;
    const bool ok = visit_dtype(kTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x->data<T>();
      T* out = y->data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        out[i] = static_cast<double>(in[i]) > threshold_ ? T{1} : T{0};
      }
    });
    if (!ok) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(x->dtype())) + " is not supported");
    }
    return ok_status();
  }

 private:
  double threshold_;
};

Result<std::unique_ptr<Kernel>> create_binarizer(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const float threshold = attrs.get_float("threshold", 0.0f);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<BinarizerKernel>(threshold);
}

}  // namespace

void register_binarizer(Registrar& r) {
  r.add({.op_type = "Binarizer", .domain = kMlDomain, .since = 1, .create = create_binarizer},
        infer_same_as_input0);
}

}  // namespace recur::reference
