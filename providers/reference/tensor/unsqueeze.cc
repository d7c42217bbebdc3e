// Unsqueeze: inserts dimensions of size 1 at the given axes of the output. Axes are an
// attribute before opset 13 and an input from 13. The output is a view.
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

// Which output positions are new: axes are relative to the output's rank.
Result<SmallVector<bool, 8>> unsqueeze_mask(size_t in_rank, const Shape& axes) {
  const size_t rank = in_rank + axes.size();
  SmallVector<bool, 8> added(rank, false);
  for (int64_t a : axes) {
    RECUR_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, static_cast<int64_t>(rank), "axis"));
    if (added[static_cast<size_t>(ax)]) {
      return invalid_argument("axis " + std::to_string(a) + " is listed twice in axes " +
                              ints_to_string(axes));
    }
    added[static_cast<size_t>(ax)] = true;
  }
  return added;
}

// `Dims`: a Shape when running, std::vector<Dim> when inferring.
template <class Dims>
Result<Dims> unsqueeze_dims(const Dims& in, const Shape& axes,
                            const typename Dims::value_type& one) {
  RECUR_ASSIGN_OR_RETURN(auto added, unsqueeze_mask(in.size(), axes));
  Dims out;
  size_t k = 0;
  for (bool a : added) out.push_back(a ? one : in[k++]);
  return out;
}

class UnsqueezeKernel final : public Kernel {
 public:
  explicit UnsqueezeKernel(Shape axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    Shape axes = axes_;
    if (ctx.node().opset >= 13) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 1));
      auto v = read_int_values(*a, "axes");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      axes = std::move(v).value();
    }
    auto out = unsqueeze_dims<Shape>(x->shape(), axes, 1);
    if (!out.ok()) return out.status().with_context(ctx.node().describe());
    return ctx.set_output(0, x->reshaped(*out));
  }

 private:
  Shape axes_;  // the attribute, before opset 13
};

Result<std::unique_ptr<Kernel>> create_unsqueeze(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::vector<int64_t> axes;
  if (ctx.opset() < 13) {
    if (!attrs.has("axes")) return ctx.error(ErrorCode::kInvalidModel, "missing attribute axes");
    axes = attrs.get_ints("axes");
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<UnsqueezeKernel>(std::move(axes));
}

Status infer_unsqueeze(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.opset() < 13) {
    axes = AttrReader(ctx.node()).get_ints("axes");
  } else {
    axes = constant_ints(ctx, 1);
  }
  if (!in.shape || !axes) {
    const TypeInfo& at = ctx.input_type(1);
    if (in.shape && at.shape && at.shape->size() == 1 && (*at.shape)[0].is_fixed()) {
      ctx.set_output(0, type_with_rank(in.dtype, in.shape->size() +
                                                     static_cast<size_t>((*at.shape)[0].value)));
    } else {
      ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    }
    return ok_status();
  }
  auto out = unsqueeze_dims<std::vector<Dim>>(*in.shape, *axes, Dim{1, {}});
  if (!out.ok()) return ctx.error(out.status().message());
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out).value()));
  return ok_status();
}

}  // namespace

void register_unsqueeze(Registrar& r) {
  r.add({.op_type = "Unsqueeze", .since = 1, .create = create_unsqueeze}, infer_unsqueeze);
}

}  // namespace recur::reference
