// Imputer (ai.onnx.ml 1): replaces each entry of X equal to the replaced value (for float, NaN
// matches NaN) with the imputed value of its column, or with the only one given. X is float
// (imputed_value_floats, replaced_value_float) or int64 (imputed_value_int64s,
// replaced_value_int64), [N, C] or [C]; Y has X's dtype and shape.
#include <cmath>
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

namespace {

class ImputerKernel final : public Kernel {
 public:
  ImputerKernel(std::vector<float> floats, float replaced_float, std::vector<int64_t> ints,
                int64_t replaced_int)
      : floats_(std::move(floats)),
        ints_(std::move(ints)),
        replaced_float_(replaced_float),
        replaced_int_(replaced_int) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 1 && x->rank() != 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be [N, C] or [C], got " + shape_to_string(x->shape()));
    }
    const int64_t cols = x->shape().back();
    if (x->dtype() == DType::kFloat32) {
      RECUR_RETURN_IF_ERROR(check_width(ctx, floats_.size(), "imputed_value_floats", cols));
      return impute<float>(ctx, *x, floats_, [&](float v) {
        return std::isnan(replaced_float_) ? std::isnan(v) : v == replaced_float_;
      });
    }
    if (x->dtype() == DType::kInt64) {
      RECUR_RETURN_IF_ERROR(check_width(ctx, ints_.size(), "imputed_value_int64s", cols));
      return impute<int64_t>(ctx, *x, ints_, [&](int64_t v) { return v == replaced_int_; });
    }
    return ctx.error(ErrorCode::kInvalidArgument,
                     "X must be float or int64, not " + std::string(dtype_name(x->dtype())));
  }

 private:
  static Status check_width(const KernelContext& ctx, size_t n, const char* name, int64_t cols) {
    if (n == 1 || static_cast<int64_t>(n) == cols) return ok_status();
    return ctx.error(ErrorCode::kInvalidArgument,
                     std::string(name) + " has " + std::to_string(n) + " values; X with " +
                         std::to_string(cols) + " columns needs 1 or " + std::to_string(cols));
  }

  template <class T, class Match>
  static Status impute(KernelContext& ctx, const Tensor& x, const std::vector<T>& values,
                       Match matches) {
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    const int64_t cols = x.shape().back();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const T v = in[i];
      out[i] = matches(v) ? values[values.size() == 1 ? 0 : static_cast<size_t>(i % cols)] : v;
    }
    return ok_status();
  }

  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_;
  int64_t replaced_int_;
};

Result<std::unique_ptr<Kernel>> create_imputer(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::vector<float> floats = attrs.get_floats("imputed_value_floats");
  std::vector<int64_t> ints = attrs.get_ints("imputed_value_int64s");
  const float replaced_float = attrs.get_float("replaced_value_float", 0.0f);
  const int64_t replaced_int = attrs.get_int("replaced_value_int64", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (floats.empty() && ints.empty()) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "neither imputed_value_floats nor imputed_value_int64s is set");
  }
  return std::make_unique<ImputerKernel>(std::move(floats), replaced_float, std::move(ints),
                                         replaced_int);
}

}  // namespace

void register_imputer(Registrar& r) {
  r.add({.op_type = "Imputer", .domain = kMlDomain, .since = 1, .create = create_imputer},
        infer_same_as_input0);
}

}  // namespace recur::reference
