// NonZero: the indices of the nonzero elements, one row per dimension ([rank, count], int64),
// in row-major order. A scalar is treated as a 1-D tensor of one element, as numpy does.
#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class NonZeroKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    std::vector<int64_t> hits;
    const bool ok = visit_dtype(kAllTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x->data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        bool nz;
        if constexpr (std::is_same_v<T, bool>) {
          nz = p[i];
        } else {
          nz = to_compute(p[i]) != compute_t<T>(0);  // NaN is nonzero
        }
        if (nz) hits.push_back(i);
      }
    });
    if (!ok) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(x->dtype())) + " is not supported");
    }
    const Shape shape = x->rank() == 0 ? Shape{1} : x->shape();
    const auto rank = static_cast<int64_t>(shape.size());
    const auto count = static_cast<int64_t>(hits.size());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DType::kInt64, {rank, count}));
    int64_t* o = out->data<int64_t>();
    for (int64_t n = 0; n < count; ++n) {
      int64_t flat = hits[static_cast<size_t>(n)];
      for (int64_t d = rank; d-- > 0;) {
        o[d * count + n] = flat % shape[static_cast<size_t>(d)];
        flat /= shape[static_cast<size_t>(d)];
      }
    }
    return ok_status();
  }
};

Status infer_non_zero(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  std::vector<Dim> out(2);
  if (in.shape) out[0] = Dim{std::max<int64_t>(1, static_cast<int64_t>(in.shape->size())), {}};
  ctx.set_output(0, type_with_dims(DType::kInt64, std::move(out)));
  return ok_status();
}

}  // namespace

void register_non_zero(Registrar& r) {
  r.add({.op_type = "NonZero", .since = 9, .create = make_simple<NonZeroKernel>()}, infer_non_zero);
}

}  // namespace recur::reference
