// Concat: joins inputs of equal rank along `axis` (default 1 in opset 1, required after).
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

int64_t default_axis(int opset) { return opset < 4 ? 1 : 0; }

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    SmallVector<const Tensor*, 16> ins;  // most Concats join a few inputs: no heap
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
      ins.push_back(t);
    }
    if (ins.empty()) return ctx.error(ErrorCode::kInvalidArgument, "no inputs");
    const Tensor& first = *ins[0];
    auto axis = normalize_axis(axis_, first.rank(), "axis");
    if (!axis.ok()) return axis.status().with_context(ctx.node().describe());
    const auto ax = static_cast<size_t>(*axis);
    Shape out_shape = first.shape();
    out_shape[ax] = 0;
    for (size_t k = 0; k < ins.size(); ++k) {
      const Tensor& t = *ins[k];
      if (t.dtype() != first.dtype()) {
        return ctx.error(ErrorCode::kInvalidArgument, "input " + std::to_string(k) + " is " +
                                                          std::string(dtype_name(t.dtype())) +
                                                          " but input 0 is " +
                                                          std::string(dtype_name(first.dtype())));
      }
      bool ok = t.rank() == first.rank();
      for (size_t d = 0; ok && d < out_shape.size(); ++d)
        ok = d == ax || t.shape()[d] == first.shape()[d];
      if (!ok) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(k) + " has shape " + shape_to_string(t.shape()) +
                             ", which does not match input 0's " + shape_to_string(first.shape()) +
                             " outside axis " + std::to_string(*axis));
      }
      if (__builtin_add_overflow(out_shape[ax], t.shape()[ax], &out_shape[ax])) {
        return ctx.error(ErrorCode::kOutOfRange, "the joined dimension overflows");
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, allocate_checked(ctx, 0, first.dtype(), out_shape));
    const size_t esize = dtype_size(first.dtype());
    if (out->numel() == 0) return ok_status();
    const int64_t outer = dims_product(out_shape, 0, ax);
    const int64_t inner = dims_product(out_shape, ax + 1, out_shape.size());
    const size_t out_row = static_cast<size_t>(out_shape[ax] * inner) * esize;
    auto* dst = static_cast<char*>(out->raw_data());
    size_t offset = 0;
    for (const Tensor* t : ins) {
      const size_t row = static_cast<size_t>(t->shape()[ax] * inner) * esize;
      const auto* src = static_cast<const char*>(t->raw_data());
      if (row > 0) {
        for (int64_t o = 0; o < outer; ++o)
          copy_bytes(dst + static_cast<size_t>(o) * out_row + offset,
                     src + static_cast<size_t>(o) * row, row);
      }
      offset += row;
    }
    return ok_status();
  }

 private:
  int64_t axis_;
};

Result<std::unique_ptr<Kernel>> create_concat(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  if (ctx.opset() >= 4 && !attrs.has("axis")) {
    return ctx.error(ErrorCode::kInvalidModel, "missing attribute axis");
  }
  const int64_t axis = attrs.get_int("axis", default_axis(ctx.opset()));
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<ConcatKernel>(axis);
}

Status infer_concat(InferContext& ctx) {
  DType dtype = DType::kUndefined;
  std::optional<std::vector<Dim>> dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TypeInfo& t = ctx.input_type(i);
    if (dtype == DType::kUndefined) dtype = t.dtype;
    if (t.shape && !dims) dims = t.shape;
  }
  if (!dims) {
    ctx.set_output(0, TypeInfo{dtype, std::nullopt});
    return ok_status();
  }
  const int64_t rank = static_cast<int64_t>(dims->size());
  auto axis = normalize_axis(AttrReader(ctx.node()).get_int("axis", default_axis(ctx.opset())),
                             rank, "axis");
  if (!axis.ok()) return ctx.error(axis.status().message());
  const auto ax = static_cast<size_t>(*axis);
  std::vector<Dim> out(dims->size());
  int64_t sum = 0;
  bool sum_known = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TypeInfo& t = ctx.input_type(i);
    if (!t.shape) {
      sum_known = false;
      continue;
    }
    if (t.shape->size() != dims->size()) {
      return ctx.error("input " + std::to_string(i) + " has rank " +
                       std::to_string(t.shape->size()) + ", others " + std::to_string(rank));
    }
    for (size_t d = 0; d < out.size(); ++d) {
      const Dim& x = (*t.shape)[d];
      if (d == ax) {
        sum_known = sum_known && x.is_fixed() && !__builtin_add_overflow(sum, x.value, &sum);
      } else if (x.is_fixed()) {
        if (out[d].is_fixed() && out[d].value != x.value) {
          return ctx.error("input " + std::to_string(i) + " has dimension " + std::to_string(d) +
                           " of " + std::to_string(x.value) + ", others " +
                           std::to_string(out[d].value));
        }
        out[d] = x;
      } else if (!out[d].is_fixed() && out[d].symbol.empty()) {
        out[d] = x;
      }
    }
  }
  if (sum_known) out[ax] = Dim{sum, {}};
  ctx.set_output(0, type_with_dims(dtype, std::move(out)));
  return ok_status();
}

}  // namespace

void register_concat(Registrar& r) {
  r.add({.op_type = "Concat", .since = 1, .create = create_concat}, infer_concat);
}

}  // namespace recur::reference
