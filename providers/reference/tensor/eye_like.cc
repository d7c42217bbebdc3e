// EyeLike: a 2-D tensor of the input's shape with ones on the k-th diagonal (j - i == k) and
// zeros elsewhere, of the `dtype` attribute or else the input's dtype.
#include <cstring>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

Result<std::optional<DType>> dtype_attr(const Node& node) {
  AttrReader attrs(node);
  if (!attrs.has("dtype")) return std::optional<DType>();
  const int64_t code = attrs.get_int("dtype", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  const auto t = static_cast<DType>(code);
  if (dtype_size(t) == 0 || dtype_name(t) == "undefined") {
    return not_implemented(node.describe() + ": dtype " + std::to_string(code) +
                           " is not supported");
  }
  return std::optional<DType>(t);
}

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(std::optional<DType> dtype, int64_t k) : dtype_(dtype), k_(k) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input must be 2-D, not shape " + shape_to_string(x->shape()));
    }
    const DType dt = dtype_.value_or(x->dtype());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dt, x->shape()));
    std::memset(out->raw_data(), 0, out->nbytes());
    const int64_t rows = x->shape()[0], cols = x->shape()[1];
    const bool ok = visit_dtype(kAllTypes, dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T one;
      if constexpr (std::is_same_v<T, bool>) {
        one = true;
      } else {
        one = from_compute<T>(1);
      }
      T* p = out->data<T>();
      // Rows i with 0 <= i + k < cols; k is clamped first so that i + k cannot overflow.
      const int64_t k = std::clamp<int64_t>(k_, -rows, cols);
      for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i)
        p[i * cols + i + k] = one;
    });
    if (!ok) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(dt)) + " is not supported");
    }
    return ok_status();
  }

 private:
  std::optional<DType> dtype_;
  int64_t k_;
};

Result<std::unique_ptr<Kernel>> create_eye_like(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(std::optional<DType> dtype, dtype_attr(ctx.node()));
  AttrReader attrs(ctx.node());
  const int64_t k = attrs.get_int("k", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<EyeLikeKernel>(dtype, k);
}

Status infer_eye_like(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(std::optional<DType> dtype, dtype_attr(ctx.node()));
  const TypeInfo& in = ctx.input_type(0);
  ctx.set_output(0, TypeInfo{dtype.value_or(in.dtype), in.shape});
  return ok_status();
}

}  // namespace

void register_eye_like(Registrar& r) {
  r.add({.op_type = "EyeLike", .since = 9, .create = create_eye_like}, infer_eye_like);
}

}  // namespace recur::reference
