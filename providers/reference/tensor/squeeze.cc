// Squeeze: removes dimensions of size 1 (the listed axes, or every such dimension). Axes are
// an attribute before opset 13 and an optional input from 13. The output is a view.
#include <algorithm>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

// Which dimensions the axes name, after checking for duplicates.
Result<SmallVector<bool, 8>> squeeze_mask(size_t rank, const Shape& axes) {
  SmallVector<bool, 8> drop(rank, false);
  for (int64_t a : axes) {
    RECUR_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, static_cast<int64_t>(rank), "axis"));
    if (drop[static_cast<size_t>(ax)]) {
      return invalid_argument("axis " + std::to_string(a) + " is listed twice in axes " +
                              ints_to_string(axes));
    }
    drop[static_cast<size_t>(ax)] = true;
  }
  return drop;
}

// No axes, or an empty list (as ONNX Runtime reads it), squeezes every dimension of size 1.
Result<Shape> squeeze_shape(const Shape& in, const std::optional<Shape>& axes) {
  Shape out;
  if (!axes || axes->empty()) {
    for (int64_t d : in)
      if (d != 1) out.push_back(d);
    return out;
  }
  RECUR_ASSIGN_OR_RETURN(auto drop, squeeze_mask(in.size(), *axes));
  for (size_t i = 0; i < in.size(); ++i) {
    if (!drop[i]) {
      out.push_back(in[i]);
    } else if (in[i] != 1) {
      return invalid_argument("cannot squeeze axis " + std::to_string(i) + " of shape " +
                              shape_to_string(in) + ": its size is " + std::to_string(in[i]) +
                              ", not 1");
    }
  }
  return out;
}

class SqueezeKernel final : public Kernel {
 public:
  explicit SqueezeKernel(std::optional<std::vector<int64_t>> axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    std::optional<Shape> axes = axes_;
    if (ctx.node().opset >= 13) {
      RECUR_ASSIGN_OR_RETURN(axes, optional_int_input(ctx, 1, "axes"));
    }
    auto out = squeeze_shape(x->shape(), axes);
    if (!out.ok()) return out.status().with_context(ctx.node().describe());
    return ctx.set_output(0, x->reshaped(*out));
  }

 private:
  std::optional<Shape> axes_;  // the attribute, before opset 13
};

Result<std::unique_ptr<Kernel>> create_squeeze(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  std::optional<std::vector<int64_t>> axes;
  if (ctx.opset() < 13 && attrs.has("axes")) axes = attrs.get_ints("axes");
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<SqueezeKernel>(std::move(axes));
}

Status infer_squeeze(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.opset() < 13) {
    AttrReader attrs(ctx.node());
    if (attrs.has("axes")) axes = attrs.get_ints("axes");
  } else if (ctx.has_input(1)) {
    axes = constant_ints(ctx, 1);
    if (!axes) {
      const TypeInfo& at = ctx.input_type(1);
      if (in.shape && at.shape && at.shape->size() == 1 && (*at.shape)[0].is_fixed()) {
        const int64_t n = (*at.shape)[0].value;
        if (n <= static_cast<int64_t>(in.shape->size())) {
          ctx.set_output(0, type_with_rank(in.dtype, in.shape->size() - static_cast<size_t>(n)));
          return ok_status();
        }
      }
      ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
      return ok_status();
    }
  }
  if (!in.shape) {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    return ok_status();
  }
  std::vector<Dim> out;
  if (!axes || axes->empty()) {
    for (const Dim& d : *in.shape) {
      if (!d.is_fixed()) {  // it might be 1: the rank is unknown
        ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
        return ok_status();
      }
      if (d.value != 1) out.push_back(d);
    }
  } else {
    auto drop = squeeze_mask(in.shape->size(), *axes);
    if (!drop.ok()) return ctx.error(drop.status().message());
    for (size_t i = 0; i < in.shape->size(); ++i) {
      const Dim& d = (*in.shape)[i];
      if (!(*drop)[i]) {
        out.push_back(d);
      } else if (d.is_fixed() && d.value != 1) {
        return ctx.error("cannot squeeze axis " + std::to_string(i) + ": its size is " +
                         std::to_string(d.value) + ", not 1");
      }
    }
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_squeeze(Registrar& r) {
  r.add({.op_type = "Squeeze", .since = 1, .create = create_squeeze}, infer_squeeze);
}

}  // namespace recur::reference
