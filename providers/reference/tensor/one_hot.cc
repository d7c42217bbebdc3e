// OneHot: a new axis of size `depth` where position indices[...] holds values[1] and every
// other position values[0]. Negative indices count from depth (opset 11); indices outside
// [-depth, depth) give a row of values[0]. Indices and depth may be of any numeric dtype.
#include <cmath>
#include <cstring>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

// Indices of any numeric dtype; fractional values truncate, and values that are not integers
// at all (NaN, huge) become an index that is out of range for any depth.
Result<std::vector<int64_t>> read_indices(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  const bool ok = visit_dtype(kNumericTypes, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      const auto x = to_compute(p[i]);
      if constexpr (std::is_floating_point_v<decltype(x)>) {
        v[i] = std::fabs(static_cast<double>(x)) < 9.0e18 ? static_cast<int64_t>(x)
                                                          : std::numeric_limits<int64_t>::max();
      } else if constexpr (std::is_same_v<T, uint64_t>) {
        v[i] = x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                   ? std::numeric_limits<int64_t>::max()
                   : static_cast<int64_t>(x);
      } else {
        v[i] = static_cast<int64_t>(x);
      }
    }
  });
  if (!ok) {
    return invalid_argument("indices have unsupported dtype " + std::string(dtype_name(t.dtype())));
  }
  return v;
}

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* indices, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* depth_t, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* values, required_input(ctx, 2));
    auto depth = read_scalar_int(*depth_t, "depth");
    if (!depth.ok()) return depth.status().with_context(ctx.node().describe());
    if (*depth < 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "depth " + std::to_string(*depth) + " is negative");
    }
    if (values->numel() != 2) {
      return ctx.error(
          ErrorCode::kInvalidArgument,
          "values must hold two elements (off, on), not shape " + shape_to_string(values->shape()));
    }
    const int64_t rank = indices->rank() + 1;
    if (axis_ < -rank || axis_ >= rank) {
      return ctx.error(ErrorCode::kOutOfRange, "axis " + std::to_string(axis_) +
                                                   " is out of range for output rank " +
                                                   std::to_string(rank));
    }
    const auto ax = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    Shape out_shape = indices->shape();
    out_shape.insert(out_shape.begin() + static_cast<int64_t>(ax), *depth);
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, values->dtype(), out_shape));
    auto idx = read_indices(*indices);
    if (!idx.ok()) return idx.status().with_context(ctx.node().describe());
    if (out->numel() == 0) return ok_status();
    const int64_t outer = dims_product(indices->shape(), 0, ax);
    const int64_t inner = dims_product(indices->shape(), ax, indices->shape().size());
    const int64_t dep = *depth;
    visit_element_size(dtype_size(values->dtype()), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* v = static_cast<const U*>(values->raw_data());
      U* p = static_cast<U*>(out->raw_data());
      const int64_t n = out->numel();
      for (int64_t i = 0; i < n; ++i) p[i] = v[0];
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          int64_t k = (*idx)[static_cast<size_t>(o * inner + j)];
          if (k < 0 && k >= -dep) k += dep;
          if (k < 0 || k >= dep) continue;
          p[(o * dep + k) * inner + j] = v[1];
        }
      }
    });
    return ok_status();
  }

 private:
  int64_t axis_;
};

Result<std::unique_ptr<Kernel>> create_one_hot(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", -1);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<OneHotKernel>(axis);
}

Status infer_one_hot(InferContext& ctx) {
  const TypeInfo& indices = ctx.input_type(0);
  const DType dtype = ctx.input_type(2).dtype;
  if (!indices.shape) {
    ctx.set_output(0, TypeInfo{dtype, std::nullopt});
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(indices.shape->size()) + 1;
  const int64_t axis = AttrReader(ctx.node()).get_int("axis", -1);
  if (axis < -rank || axis >= rank) {
    return ctx.error("axis " + std::to_string(axis) + " is out of range for output rank " +
                     std::to_string(rank));
  }
  Dim depth;
  if (const Tensor* d = ctx.input_value(1)) {
    auto v = read_scalar_int(*d, "depth");
    if (v.ok() && *v >= 0) depth = Dim{*v, {}};
  }
  std::vector<Dim> out = *indices.shape;
  out.insert(out.begin() + (axis < 0 ? axis + rank : axis), depth);
  ctx.set_output(0, type_with_dims(dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_one_hot(Registrar& r) {
  r.add({.op_type = "OneHot", .since = 9, .create = create_one_hot}, infer_one_hot);
}

}  // namespace recur::reference
