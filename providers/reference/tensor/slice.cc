// Slice: starts/ends/axes are attributes before opset 10; from 10 they are inputs, with steps
// (negative steps walk backward). Out-of-range starts and ends are clamped, as numpy does.
#include <limits>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

struct SliceArgs {
  Shape starts, ends;
  std::optional<Shape> axes, steps;
};

// For each input dimension: the first index read, the step, and the output size.
struct SlicePlan {
  Shape first, step;
  Shape out_shape;
};

struct AxisSlice {
  int64_t first, step, count;
};

AxisSlice slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  // Adding dim to a negative value cannot overflow; clamping follows.
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  int64_t count = 0;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) count = (end - start - 1) / step + 1;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    // step == INT64_MIN cannot be negated; any |step| >= dim takes one element.
    if (start > end) {
      count = step == std::numeric_limits<int64_t>::min() ? 1 : (start - end - 1) / -step + 1;
    }
  }
  return {count > 0 ? start : 0, step, count};
}

// The axes each (start, end, step) applies to, normalised and checked.
Result<Shape> slice_axes(const SliceArgs& a, size_t rank) {
  const size_t n = a.starts.size();
  if (a.ends.size() != n) {
    return invalid_argument("starts " + ints_to_string(a.starts) + " and ends " +
                            ints_to_string(a.ends) + " differ in length");
  }
  if (a.steps && a.steps->size() != n) {
    return invalid_argument("steps " + ints_to_string(*a.steps) + " and starts " +
                            ints_to_string(a.starts) + " differ in length");
  }
  Shape axes(n);
  if (a.axes) {
    if (a.axes->size() != n) {
      return invalid_argument("axes " + ints_to_string(*a.axes) + " and starts " +
                              ints_to_string(a.starts) + " differ in length");
    }
    SmallVector<bool, 8> seen(rank, false);
    for (size_t i = 0; i < n; ++i) {
      RECUR_ASSIGN_OR_RETURN(axes[i],
                             normalize_axis((*a.axes)[i], static_cast<int64_t>(rank), "axis"));
      if (seen[static_cast<size_t>(axes[i])]) {
        return invalid_argument("axes " + ints_to_string(*a.axes) + " repeat an axis");
      }
      seen[static_cast<size_t>(axes[i])] = true;
    }
  } else {
    if (n > rank) {
      return invalid_argument(std::to_string(n) + " starts for an input of rank " +
                              std::to_string(rank));
    }
    for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  }
  if (a.steps) {
    for (int64_t s : *a.steps)
      if (s == 0) return invalid_argument("steps " + ints_to_string(*a.steps) + " contain 0");
  }
  return axes;
}

Result<SlicePlan> plan_slice(const Shape& in, const SliceArgs& a) {
  RECUR_ASSIGN_OR_RETURN(Shape axes, slice_axes(a, in.size()));
  SlicePlan p{Shape(in.size(), 0), Shape(in.size(), 1), in};
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto ax = static_cast<size_t>(axes[i]);
    const AxisSlice s =
        slice_axis(in[ax], a.starts[i], a.ends[i], a.steps ? (*a.steps)[i] : int64_t{1});
    p.first[ax] = s.first;
    p.step[ax] = s.step;
    p.out_shape[ax] = s.count;
  }
  return p;
}

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(std::optional<SliceArgs> attrs) : attrs_(std::move(attrs)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    SliceArgs args;
    if (attrs_) {
      args = *attrs_;
    } else {
      RECUR_ASSIGN_OR_RETURN(const Tensor* starts, required_input(ctx, 1));
      RECUR_ASSIGN_OR_RETURN(const Tensor* ends, required_input(ctx, 2));
      auto s = read_int_values(*starts, "starts");
      if (!s.ok()) return s.status().with_context(ctx.node().describe());
      auto e = read_int_values(*ends, "ends");
      if (!e.ok()) return e.status().with_context(ctx.node().describe());
      args.starts = std::move(s).value();
      args.ends = std::move(e).value();
      RECUR_ASSIGN_OR_RETURN(args.axes, optional_int_input(ctx, 3, "axes"));
      RECUR_ASSIGN_OR_RETURN(args.steps, optional_int_input(ctx, 4, "steps"));
    }
    auto plan = plan_slice(x->shape(), args);
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    if (plan->out_shape == x->shape()) {
      bool whole = true;
      for (size_t d = 0; d < plan->step.size(); ++d)
        whole = whole && (plan->step[d] == 1 || x->shape()[d] <= 1) && plan->first[d] == 0;
      if (whole) return ctx.set_output(0, *x);
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), plan->out_shape));
    if (out->numel() == 0) return ok_status();
    const Shape in_strides = contiguous_strides(x->shape());
    Shape strides(in_strides.size());
    int64_t offset = 0;
    for (size_t d = 0; d < strides.size(); ++d) {
      // A dimension of output size 1 never advances: its step (INT64_MAX, say) is not used, and
      // multiplying it out could overflow. Otherwise |step| < dim, and the product fits.
      strides[d] = plan->out_shape[d] > 1 ? in_strides[d] * plan->step[d] : 0;
      offset += in_strides[d] * plan->first[d];
    }
    strided_copy(x->raw_data(), out->raw_data(), dtype_size(x->dtype()), plan->out_shape, strides,
                 offset);
    return ok_status();
  }

 private:
  std::optional<SliceArgs> attrs_;  // before opset 10
};

Result<std::optional<SliceArgs>> attribute_args(const Node& node) {
  if (node.opset >= 10) return std::optional<SliceArgs>();
  AttrReader attrs(node);
  SliceArgs a;
  if (!attrs.has("starts") || !attrs.has("ends")) {
    return invalid_model(node.describe() + ": missing attribute starts or ends");
  }
  a.starts = attrs.get_ints("starts");
  a.ends = attrs.get_ints("ends");
  if (attrs.has("axes")) a.axes = attrs.get_ints("axes");
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::optional<SliceArgs>(std::move(a));
}

Result<std::unique_ptr<Kernel>> create_slice(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(std::optional<SliceArgs> args, attribute_args(ctx.node()));
  return std::make_unique<SliceKernel>(std::move(args));
}

// Whether slicing a dimension of unknown size keeps all of it: start 0 and an end at or past
// any plausible size (exporters write INT64_MAX), or the same backward.
bool keeps_whole_dim(int64_t start, int64_t end, int64_t step) {
  constexpr int64_t kHuge = std::numeric_limits<int32_t>::max();
  if (step == 1) return start == 0 && end >= kHuge;
  if (step == -1) return (start == -1 || start >= kHuge) && end <= -kHuge;
  return false;
}

Status infer_slice(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (!in.shape) {
    ctx.set_output(0, TypeInfo{in.dtype, std::nullopt});
    return ok_status();
  }
  auto attr_args = attribute_args(ctx.node());
  if (!attr_args.ok()) return attr_args.status();
  SliceArgs args;
  if (*attr_args) {
    args = **attr_args;
  } else {
    auto starts = constant_ints(ctx, 1), ends = constant_ints(ctx, 2);
    std::optional<std::vector<int64_t>> axes, steps;
    bool known = starts && ends;
    if (ctx.has_input(3)) known = known && (axes = constant_ints(ctx, 3)).has_value();
    if (ctx.has_input(4)) known = known && (steps = constant_ints(ctx, 4)).has_value();
    if (!known) {
      // The rank is kept; dimensions that are certainly untouched could be kept too, but
      // without the axes we cannot tell which.
      ctx.set_output(0, type_with_rank(in.dtype, in.shape->size()));
      return ok_status();
    }
    args = SliceArgs{*starts, *ends, axes, steps};
  }
  auto axes = slice_axes(args, in.shape->size());
  if (!axes.ok()) return ctx.error(axes.status().message());
  std::vector<Dim> out = *in.shape;
  for (size_t i = 0; i < axes->size(); ++i) {
    const auto ax = static_cast<size_t>((*axes)[i]);
    const int64_t step = args.steps ? (*args.steps)[i] : 1;
    const Dim& d = (*in.shape)[ax];
    if (d.is_fixed()) {
      out[ax] = Dim{slice_axis(d.value, args.starts[i], args.ends[i], step).count, {}};
    } else if (!keeps_whole_dim(args.starts[i], args.ends[i], step)) {
      out[ax] = Dim{};
    }
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_slice(Registrar& r) {
  r.add({.op_type = "Slice", .since = 1, .create = create_slice}, infer_slice);
}

}  // namespace recur::reference
