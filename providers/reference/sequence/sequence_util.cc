#include "providers/reference/sequence/sequence_ops.h"

namespace recur::reference {

Result<const Tensor*> sequence_input(const KernelContext& ctx, size_t i) {
  RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
  if (!t->is_sequence()) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "input " + std::to_string(i) + " must be a sequence, not a " +
                         std::string(dtype_name(t->dtype())) + " tensor");
  }
  return t;
}

Result<const Tensor*> tensor_input(const KernelContext& ctx, size_t i) {
  RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
  if (t->is_sequence()) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "input " + std::to_string(i) + " must be a tensor, not a sequence");
  }
  return t;
}

Result<int64_t> read_position(const KernelContext& ctx, const Tensor& t, int64_t size,
                              int64_t extra) {
  if (t.is_sequence() || t.numel() != 1 ||
      (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    return ctx.error(ErrorCode::kInvalidArgument, "position must be a single int32 or int64, got " +
                                                      std::string(dtype_name(t.dtype())) +
                                                      shape_to_string(t.shape()));
  }
  const int64_t pos = t.dtype() == DType::kInt64 ? *t.data<int64_t>() : *t.data<int32_t>();
  if (pos < -size || pos >= size + extra) {
    return ctx.error(ErrorCode::kOutOfRange,
                     "position " + std::to_string(pos) + " is out of range [" +
                         std::to_string(-size) + ", " + std::to_string(size + extra - 1) +
                         "] for a sequence of length " + std::to_string(size));
  }
  return pos < 0 ? pos + size : pos;
}

TypeInfo sequence_type(DType element) {
  TypeInfo t;
  t.dtype = DType::kSequence;
  t.element_dtype = element;
  return t;
}

}  // namespace recur::reference
