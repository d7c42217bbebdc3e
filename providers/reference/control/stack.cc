// Stacking and slicing along an axis, for the scan outputs and inputs of Loop and Scan, and
// their iteration errors.
#include "providers/reference/common/util.h"
#include "providers/reference/control/control_ops.h"

namespace recur::reference {

Result<Tensor> stack_tensors(std::span<const Tensor> parts, int64_t axis, bool reverse, DType dtype,
                             const Shape& empty_shape) {
  const Shape elem = parts.empty() ? empty_shape : parts.front().shape();
  const auto rank = static_cast<int64_t>(elem.size());
  if (axis < 0) axis += rank + 1;
  if (axis < 0 || axis > rank) {
    return out_of_range("stack axis " + std::to_string(axis) + " is out of range for rank " +
                        std::to_string(rank + 1));
  }
  if (dtype == DType::kSequence) return invalid_argument("a scan output cannot be a sequence");
  for (const Tensor& p : parts) {
    if (p.shape() != elem || p.dtype() != dtype) {
      return invalid_argument("scan outputs differ between iterations: " +
                              std::string(dtype_name(p.dtype())) + shape_to_string(p.shape()) +
                              " against " + std::string(dtype_name(dtype)) + shape_to_string(elem));
    }
  }
  Shape out_shape = elem;
  out_shape.insert(out_shape.begin() + axis, static_cast<int64_t>(parts.size()));
  Tensor out = Tensor::empty(dtype, out_shape);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= elem[static_cast<size_t>(i)];
  const int64_t inner = shape_numel(elem) / (outer ? outer : 1);
  const auto n = static_cast<int64_t>(parts.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t t = 0; t < n; ++t) {
      const Tensor& src = parts[static_cast<size_t>(reverse ? n - 1 - t : t)];
      copy_elements(src, o * inner, out, (o * n + t) * inner, inner);
    }
  }
  return out;
}

Tensor slice_along(const Tensor& t, int64_t axis, int64_t index) {
  Shape out_shape = t.shape();
  const int64_t len = out_shape[static_cast<size_t>(axis)];
  out_shape.erase(out_shape.begin() + axis);
  Tensor out = Tensor::empty(t.dtype(), out_shape);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= t.shape()[static_cast<size_t>(i)];
  const int64_t inner = shape_numel(out_shape) / (outer ? outer : 1);
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(t, (o * len + index) * inner, out, o * inner, inner);
  return out;
}

Status iteration_error(const KernelContext& ctx, int64_t it, const Status& st) {
  if (st.code() != ErrorCode::kOutOfRange && st.code() != ErrorCode::kCancelled) return st;
  return ctx.error(st.code(), "iteration " + std::to_string(it) + ": " + st.message());
}

}  // namespace recur::reference
