// Split: cuts the input along `axis` into the outputs, by the `split` sizes (an attribute
// before opset 13, or input 1 in opset 1 and from 13) or into equal parts. From opset 18 the
// parts need not be equal: each is ceil(dim / outputs) long while the dimension lasts.
#include <algorithm>
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

Result<std::vector<int64_t>> split_sizes(int64_t dim, size_t outputs,
                                         const std::optional<std::vector<int64_t>>& split,
                                         bool uneven) {
  if (outputs == 0) return invalid_argument("no outputs");
  if (!split || split->empty()) {
    const auto n = static_cast<int64_t>(outputs);
    if (uneven && dim % n != 0) {
      // As the ONNX reference slices: parts of ceil(dim / n) while the dimension lasts, so
      // with more parts than that covers the last ones are empty (5 into 4: 2, 2, 1, 0).
      const int64_t part = dim / n + 1;
      std::vector<int64_t> sizes(outputs);
      for (int64_t k = 0; k < n; ++k) {
        sizes[static_cast<size_t>(k)] = std::clamp<int64_t>(dim - k * part, 0, part);
      }
      return sizes;
    }
    if (dim % n != 0) {
      return invalid_argument("dimension " + std::to_string(dim) + " cannot be split into " +
                              std::to_string(n) + " equal parts");
    }
    return std::vector<int64_t>(outputs, dim / n);
  }
  if (split->size() != outputs) {
    return invalid_argument("split " + ints_to_string(*split) + " has " +
                            std::to_string(split->size()) + " entries for " +
                            std::to_string(outputs) + " outputs");
  }
  int64_t sum = 0;
  for (int64_t s : *split) {
    if (s < 0 || __builtin_add_overflow(sum, s, &sum)) {
      return invalid_argument("split " + ints_to_string(*split) + " has a negative size");
    }
  }
  if (sum != dim) {
    return invalid_argument("split " + ints_to_string(*split) + " sums to " + std::to_string(sum) +
                            ", not the dimension's " + std::to_string(dim));
  }
  return *split;
}

class SplitKernel final : public Kernel {
 public:
  SplitKernel(int64_t axis, std::optional<std::vector<int64_t>> split)
      : axis_(axis), split_(std::move(split)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    std::optional<std::vector<int64_t>> split = split_;
    if (ctx.node().opset >= 13 || (ctx.node().opset < 2 && ctx.input(1))) {
      RECUR_ASSIGN_OR_RETURN(split, optional_int_input(ctx, 1, "split"));
    }
    auto axis = normalize_axis(axis_, x->rank(), "axis");
    if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
    const auto ax = static_cast<size_t>(*axis);
    auto sizes = split_sizes(x->shape()[ax], ctx.num_outputs(), split, ctx.node().opset >= 18);
    if (!sizes.ok()) return sizes.status().with_context(ctx.node().describe());
    const size_t esize = dtype_size(x->dtype());
    const bool empty = x->numel() == 0;
    const int64_t outer = dims_product(x->shape(), 0, ax);
    const int64_t inner = dims_product(x->shape(), ax + 1, x->shape().size());
    const size_t in_row = static_cast<size_t>(x->shape()[ax] * inner) * esize;
    const auto* src = static_cast<const char*>(x->raw_data());
    size_t offset = 0;
    for (size_t k = 0; k < sizes->size(); ++k) {
      Shape shape = x->shape();
      shape[ax] = (*sizes)[k];
      RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(k, x->dtype(), shape));
      const size_t row = static_cast<size_t>((*sizes)[k] * inner) * esize;
      auto* dst = static_cast<char*>(out->raw_data());
      if (!empty && row > 0) {
        for (int64_t o = 0; o < outer; ++o)
          copy_bytes(dst + static_cast<size_t>(o) * row,
                     src + static_cast<size_t>(o) * in_row + offset, row);
      }
      offset += row;
    }
    return ok_status();
  }

 private:
  int64_t axis_;
  std::optional<std::vector<int64_t>> split_;  // the attribute, before opset 13
};

Result<std::unique_ptr<Kernel>> create_split(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t axis = attrs.get_int("axis", 0);
  std::optional<std::vector<int64_t>> split;
  if (ctx.opset() < 13 && attrs.has("split")) split = attrs.get_ints("split");
  if (ctx.opset() >= 18 && attrs.has("num_outputs")) {
    const int64_t n = attrs.get_int("num_outputs", 0);
    if (n != static_cast<int64_t>(ctx.node().outputs.size())) {
      return invalid_model(ctx.node().describe() + ": num_outputs " + std::to_string(n) +
                           " but the node has " + std::to_string(ctx.node().outputs.size()) +
                           " outputs");
    }
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<SplitKernel>(axis, std::move(split));
}

Status infer_split(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  if (!in.shape) {
    for (size_t k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, TypeInfo{in.dtype, {}});
    return ok_status();
  }
  AttrReader attrs(ctx.node());
  auto axis =
      normalize_axis(attrs.get_int("axis", 0), static_cast<int64_t>(in.shape->size()), "axis");
  if (!axis.ok()) return ctx.error(axis.status().message());
  const auto ax = static_cast<size_t>(*axis);
  std::optional<std::vector<int64_t>> split;
  bool split_known = true;
  if (ctx.opset() < 13 && attrs.has("split")) {
    split = attrs.get_ints("split");
  } else if ((ctx.opset() >= 13 || ctx.opset() < 2) && ctx.has_input(1)) {
    split = constant_ints(ctx, 1);
    split_known = split.has_value();
  }
  const Dim& d = (*in.shape)[ax];
  std::optional<std::vector<int64_t>> sizes;
  if (split_known && d.is_fixed()) {
    auto s = split_sizes(d.value, ctx.num_outputs(), split, ctx.opset() >= 18);
    if (!s.ok()) return ctx.error(s.status().message());
    sizes = *s;
  } else if (split && split->size() == ctx.num_outputs()) {
    sizes = split;
  }
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    std::vector<Dim> dims = *in.shape;
    dims[ax] = sizes ? Dim{(*sizes)[k], {}} : Dim{};
    ctx.set_output(k, type_with_dims(in.dtype, std::move(dims)));
  }
  return ok_status();
}

}  // namespace

void register_split(Registrar& r) {
  r.add({.op_type = "Split", .since = 1, .create = create_split}, infer_split);
}

}  // namespace recur::reference
