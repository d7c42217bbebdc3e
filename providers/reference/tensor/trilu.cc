// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two
// dimensions and zeroes the rest.
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "providers/reference/tensor/tensor_util.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(bool upper) : upper_(upper) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() < 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input must have rank >= 2, not shape " + shape_to_string(x->shape()));
    }
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      auto v = read_int_values(*kt, "k");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      if (v->size() != 1) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "k must have one element, not shape " + shape_to_string(kt->shape()));
      }
      k = (*v)[0];
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->numel() == 0) return ok_status();
    const int64_t rows = x->dim(-2), cols = x->dim(-1);
    const int64_t mats = x->numel() / (rows * cols);
    const size_t esize = dtype_size(x->dtype());
    const auto* src = static_cast<const char*>(x->raw_data());
    auto* dst = static_cast<char*>(out->raw_data());
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        const size_t row = static_cast<size_t>((m * rows + i) * cols) * esize;
        for (int64_t j = 0; j < cols; ++j) {
          // j - i is within [-rows, cols]; comparing it with any int64 k is safe.
          const bool keep = upper_ ? j - i >= k : j - i <= k;
          const size_t at = row + static_cast<size_t>(j) * esize;
          if (keep) {
            copy_bytes(dst + at, src + at, esize);
          } else {
            std::memset(dst + at, 0, esize);  // zero bits are 0 (and false) in every dtype
          }
        }
      }
    }
    return ok_status();
  }

 private:
  bool upper_;
};

Result<std::unique_ptr<Kernel>> create_trilu(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const bool upper = attrs.get_int("upper", 1) != 0;
  RECUR_RETURN_IF_ERROR(attrs.status());
  return std::make_unique<TriluKernel>(upper);
}

}  // namespace

void register_trilu(Registrar& r) {
  r.add({.op_type = "Trilu", .since = 14, .create = create_trilu}, infer_same_as_input0);
}

}  // namespace recur::reference
