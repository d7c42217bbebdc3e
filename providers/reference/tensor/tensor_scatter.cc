// TensorScatter (opset 24): present_cache = past_cache with `update` written along `axis` (the
// sequence axis) from write_indices[b] on, for each batch entry b. "linear" requires the
// write to fit; "circular" wraps the sequence index modulo the cache length.
#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"

namespace recur::reference {

namespace {

class TensorScatterKernel final : public Kernel {
 public:
  TensorScatterKernel(int64_t axis, bool circular) : axis_(axis), circular_(circular) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* past, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* update, required_input(ctx, 1));
    const Tensor* wi = ctx.input(2);
    if (past->dtype() != update->dtype()) {
      return invalid_argument("update (" + std::string(dtype_name(update->dtype())) +
                              ") must have past_cache's dtype " +
                              std::string(dtype_name(past->dtype())));
    }
    const Shape& ps = past->shape();
    const Shape& us = update->shape();
    RECUR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, past->rank(), "axis"));
    if (axis == 0) return invalid_argument("axis must not be 0, the batch axis");
    bool fits = us.size() == ps.size();
    for (size_t d = 0; fits && d < ps.size(); ++d) {
      fits = static_cast<int64_t>(d) == axis ? us[d] <= ps[d] : us[d] == ps[d];
    }
    if (!fits) {
      return invalid_argument("update " + shape_to_string(us) + " must match past_cache " +
                              shape_to_string(ps) + " except along axis " + std::to_string(axis) +
                              ", where it may be shorter");
    }
    const int64_t batch = ps[0];
    const int64_t max_len = ps[static_cast<size_t>(axis)];
    const int64_t len = us[static_cast<size_t>(axis)];
    std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
    if (wi) {
      if (wi->dtype() != DType::kInt64 || wi->shape() != Shape{batch}) {
        return invalid_argument("write_indices must be int64 [" + std::to_string(batch) +
                                "], not " + std::string(dtype_name(wi->dtype())) + " " +
                                shape_to_string(wi->shape()));
      }
      RECUR_RETURN_IF_ERROR(read_int_values_into(*wi, "write_indices", starts));
    }
    if (len > 0) {
      for (size_t b = 0; b < starts.size(); ++b) {
        const int64_t w = starts[b];
        if (circular_) {
          // Wrapped up front (floor modulo, as numpy's), so that w + j below cannot overflow.
          starts[b] = ((w % max_len) + max_len) % max_len;
        } else if (w < 0 || w > max_len - len) {
          return out_of_range("write index " + std::to_string(w) + " of batch entry " +
                              std::to_string(b) + " with " + std::to_string(len) +
                              " updates does not fit the cache length " + std::to_string(max_len) +
                              " (mode linear)");
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, past->dtype(), ps));
    copy_elements(*past, 0, *out, 0, past->numel());
    int64_t inner = 1, per_batch = 1;  // elements after axis; prefixes per batch entry
    for (size_t d = static_cast<size_t>(axis) + 1; d < ps.size(); ++d) inner *= ps[d];
    for (size_t d = 1; d < static_cast<size_t>(axis); ++d) per_batch *= ps[d];
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t p = 0; p < per_batch; ++p) {
        const int64_t prefix = b * per_batch + p;
        for (int64_t j = 0; j < len; ++j) {
          int64_t k = starts[static_cast<size_t>(b)] + j;
          if (circular_) k %= max_len;
          copy_elements(*update, (prefix * len + j) * inner, *out, (prefix * max_len + k) * inner,
                        inner);
        }
      }
    }
    return ok_status();
  }

 private:
  int64_t axis_;
  bool circular_;
};

}  // namespace

void register_tensor_scatter(Registrar& r) {
  r.add({.op_type = "TensorScatter",
         .since = 24,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.get_int("axis", -2);
           const std::string mode = a.get_string("mode", "linear");
           RECUR_RETURN_IF_ERROR(a.status());
           if (mode != "linear" && mode != "circular") {
             return ctx.error(ErrorCode::kInvalidModel,
                              "mode must be \"linear\" or \"circular\", not \"" + mode + "\"");
           }
           return std::make_unique<TensorScatterKernel>(axis, mode == "circular");
         },
         .takes_strings = true},
        infer_same_as_input0);
}

}  // namespace recur::reference
