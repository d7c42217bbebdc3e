// Shape: the input's dimensions as a 1-D int64 tensor; from opset 15 only those in
// [start, end), both clamped to the rank after adding it to negative values.
#include <algorithm>
#include <limits>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

std::pair<int64_t, int64_t> shape_range(int64_t rank, int64_t start, int64_t end) {
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  return {start, std::max(start, end)};
}

class ShapeKernel final : public Kernel {
 public:
  ShapeKernel(int64_t start, int64_t end) : start_(start), end_(end) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const auto [b, e] = shape_range(x->rank(), start_, end_);
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DType::kInt64, {e - b}));
    int64_t* p = out->data<int64_t>();
    for (int64_t i = b; i < e; ++i) p[i - b] = x->shape()[static_cast<size_t>(i)];
    return ok_status();
  }

 private:
  int64_t start_, end_;
};

std::pair<int64_t, int64_t> read_range(const Node& node, AttrReader& attrs) {
  if (node.opset < 15) return {0, std::numeric_limits<int64_t>::max()};
  return {attrs.get_int("start", 0), attrs.get_int("end", std::numeric_limits<int64_t>::max())};
}

Result<std::unique_ptr<Kernel>> create_shape(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const auto [start, end] = read_range(ctx.node(), attrs);
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<ShapeKernel>(start, end);
}

Status infer_shape(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  std::vector<Dim> out(1);
  if (in.shape) {
    AttrReader attrs(ctx.node());
    const auto [start, end] = read_range(ctx.node(), attrs);
    const auto [b, e] = shape_range(static_cast<int64_t>(in.shape->size()), start, end);
    out[0] = Dim{e - b, {}};
  }
  ctx.set_output(0, type_with_dims(DType::kInt64, std::move(out)));
  return ok_status();
}

}  // namespace

void register_shape(Registrar& r) {
  // Only the input's shape is read: a device tensor's shape needs no copy.
  r.add({.op_type = "Shape", .since = 1, .create = create_shape, .shape_only_inputs = {0}},
        infer_shape);
}

}  // namespace recur::reference
