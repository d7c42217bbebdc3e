// HannWindow, HammingWindow and BlackmanWindow (opset 17): a window of `size` (a scalar input)
// samples, w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), with N = size when periodic (the
// default) and size - 1 when symmetric. The output type is output_datatype (default float).
#include <cmath>
#include <numbers>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/signal/signal_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

struct Coefficients {
  double a0, a1, a2;
};

class WindowKernel final : public Kernel {
 public:
  WindowKernel(Coefficients c, bool periodic, DType dtype)
      : c_(c), periodic_(periodic), dtype_(dtype) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 0));
    auto size = read_scalar_int(*s, "size");
    if (!size.ok()) return size.status().with_context(ctx.node().describe());
    if (*size < 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "size " + std::to_string(*size) + " is negative");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, allocate_checked(ctx, 0, dtype_, {*size}));
    const int64_t denom = periodic_ ? *size : *size - 1;
    visit_dtype(kNumericTypes, dtype_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y->data<T>();
      for (int64_t n = 0; n < *size; ++n) {
        // A symmetric window of one sample is 0 / 0 in the formula; numpy's is [1].
        double v = 1.0;
        if (denom > 0) {
          const double t =
              2.0 * std::numbers::pi * static_cast<double>(n) / static_cast<double>(denom);
          v = c_.a0 - c_.a1 * std::cos(t) + c_.a2 * std::cos(2.0 * t);
        }
        out[n] = static_cast<T>(static_cast<compute_t<T>>(v));
      }
    });
    return ok_status();
  }

 private:
  Coefficients c_;
  bool periodic_;
  DType dtype_;
};

Status infer_window(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(DType t, signal_output_type(ctx.node()));
  TypeInfo info;
  info.dtype = t;
  info.shape = std::vector<Dim>{Dim{}};
  if (auto v = constant_ints(ctx, 0); v && v->size() == 1 && (*v)[0] >= 0)
    info.shape = std::vector<Dim>{Dim{(*v)[0], ""}};
  ctx.set_output(0, info);
  return ok_status();
}

KernelDef window_def(const char* op, Coefficients c) {
  return {.op_type = op,
          .since = 17,
          .create = [c](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
            RECUR_ASSIGN_OR_RETURN(DType t, signal_output_type(ctx.node()));
            AttrReader attrs(ctx.node());
            const int64_t periodic = attrs.get_int("periodic", 1);
            RECUR_RETURN_IF_ERROR(attrs.status());
            return std::make_unique<WindowKernel>(c, periodic != 0, t);
          }};
}

}  // namespace

void register_windows(Registrar& r) {
  r.add(window_def("HannWindow", {0.5, 0.5, 0.0}), infer_window);
  r.add(window_def("HammingWindow", {25.0 / 46.0, 21.0 / 46.0, 0.0}), infer_window);
  r.add(window_def("BlackmanWindow", {0.42, 0.5, 0.08}), infer_window);
}

}  // namespace recur::reference
