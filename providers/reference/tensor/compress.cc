// Compress: the slices along `axis` (or, without an axis, the elements of the flattened input)
// whose entry in the 1-D bool `condition` is true. A shorter condition leaves the rest out.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(std::optional<int64_t> axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* cond, required_input(ctx, 1));
    if (cond->dtype() != DType::kBool || cond->rank() != 1) {
      return ctx.error(ErrorCode::kInvalidArgument, "condition must be a 1-D bool tensor, not " +
                                                        std::string(dtype_name(cond->dtype())) +
                                                        shape_to_string(cond->shape()));
    }
    Shape shape = x->shape();
    size_t ax = 0;
    if (axis_) {
      auto a = normalize_axis(*axis_, x->rank(), "axis");
      if (!a.ok()) return a.status().with_context(ctx.node().describe());
      ax = static_cast<size_t>(*a);
    } else {
      shape = {x->numel()};
    }
    const int64_t dim = shape[ax];
    const bool* c = cond->data<bool>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < cond->numel(); ++i) {
      if (!c[i]) continue;
      if (i >= dim) {
        return ctx.error(ErrorCode::kOutOfRange, "condition selects index " + std::to_string(i) +
                                                     ", beyond the axis' size " +
                                                     std::to_string(dim));
      }
      kept.push_back(i);
    }
    Shape out_shape = shape;
    out_shape[ax] = static_cast<int64_t>(kept.size());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), out_shape));
    if (out->numel() == 0) return ok_status();
    const int64_t outer = dims_product(shape, 0, ax);
    const int64_t inner = dims_product(shape, ax + 1, shape.size());
    const size_t block = static_cast<size_t>(inner) * dtype_size(x->dtype());
    if (block == 0) return ok_status();
    const auto* src = static_cast<const char*>(x->raw_data());
    auto* dst = static_cast<char*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i : kept) {
        copy_bytes(dst, src + static_cast<size_t>(o * dim + i) * block, block);
        dst += block;
      }
    }
    return ok_status();
  }

 private:
  std::optional<int64_t> axis_;
};

Result<std::unique_ptr<Kernel>> create_compress(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::optional<int64_t> axis;
  if (attrs.has("axis")) axis = attrs.get_int("axis", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<CompressKernel>(axis);
}

Status infer_compress(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  AttrReader attrs(ctx.node());
  if (!attrs.has("axis")) {
    ctx.set_output(0, type_with_rank(in.dtype, 1));
    return ok_status();
  }
  if (!in.shape) {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    return ok_status();
  }
  auto axis =
      normalize_axis(attrs.get_int("axis", 0), static_cast<int64_t>(in.shape->size()), "axis");
  if (!axis.ok()) return ctx.error(axis.status().message());
  std::vector<Dim> out = *in.shape;
  out[static_cast<size_t>(*axis)] = Dim{};
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_compress(Registrar& r) {
  r.add({.op_type = "Compress", .since = 9, .create = create_compress}, infer_compress);
}

}  // namespace recur::reference
