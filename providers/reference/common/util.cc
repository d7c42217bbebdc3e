#include "providers/reference/common/util.h"

#include <algorithm>
#include <cstring>

#include "runtime/core/copy_bytes.h"

namespace recur::reference {

Result<Shape> read_int_values(const Tensor& t, std::string_view what) {
  if (!t.is_cpu()) return invalid_argument(std::string(what) + " must be on the host");
  Shape v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    const int64_t* p = t.data<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else if (t.dtype() == DType::kInt32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    return invalid_argument(std::string(what) + " must be int64 or int32, not " +
                            std::string(dtype_name(t.dtype())));
  }
  return v;
}

Status read_int_values_into(const Tensor& t, std::string_view what, std::vector<int64_t>& out) {
  if (!t.is_cpu()) return invalid_argument(std::string(what) + " must be on the host");
  out.resize(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    const int64_t* p = t.data<int64_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else if (t.dtype() == DType::kInt32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else {
    return invalid_argument(std::string(what) + " must be int64 or int32, not " +
                            std::string(dtype_name(t.dtype())));
  }
  return ok_status();
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank || (rank == 0 && axis != 0)) {
    return out_of_range(what + " " + std::to_string(axis) + " is out of range for rank " +
                        std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Result<const Tensor*> required_input(const KernelContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  if (!t) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "required input " + std::to_string(i) + " is missing");
  }
  return t;
}

Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DType::kString) {
    const std::string* from = src.data<std::string>() + src_off;
    std::copy(from, from + n, dst.data<std::string>() + dst_off);
    return;
  }
  const size_t esize = dtype_size(src.dtype());
  copy_bytes(static_cast<char*>(dst.raw_data()) + static_cast<size_t>(dst_off) * esize,
             static_cast<const char*>(src.raw_data()) + static_cast<size_t>(src_off) * esize,
             static_cast<size_t>(n) * esize);
}

Status infer_same_as_input0(InferContext& ctx) {
  ctx.set_output(0, ctx.input_type(0));
  return ok_status();
}

}  // namespace recur::reference
