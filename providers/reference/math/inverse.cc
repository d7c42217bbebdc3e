// com.microsoft::Inverse (ONNX Runtime's contrib operator, which its PyTorch export helper
// writes for torch.inverse; ONNX has no such operator): the inverse of each [M, M] matrix of
// a [*, M, M] input, by Gauss-Jordan elimination with partial pivoting in double precision. A
// singular matrix gives NaN everywhere (ONNX Runtime's Eigen kernel gives infinities or NaN
// there, whichever its arithmetic meets first).
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/math/math.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

// Overwrites `inv` (m x m) with the inverse of `a` (m x m, destroyed); false if `a` is
// singular.
bool invert(double* a, double* inv, int64_t m) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < m; ++c) inv[r * m + c] = r == c ? 1.0 : 0.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) pivot = r;
    if (a[pivot * m + c] == 0.0 || !std::isfinite(a[pivot * m + c])) return false;
    if (pivot != c) {
      for (int64_t k = 0; k < m; ++k) {
        std::swap(a[c * m + k], a[pivot * m + k]);
        std::swap(inv[c * m + k], inv[pivot * m + k]);
      }
    }
    const double p = a[c * m + c];
    for (int64_t k = 0; k < m; ++k) {
      a[c * m + k] /= p;
      inv[c * m + k] /= p;
    }
    for (int64_t r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = a[r * m + c];
      if (f == 0.0) continue;
      for (int64_t k = 0; k < m; ++k) {
        a[r * m + k] -= f * a[c * m + k];
        inv[r * m + k] -= f * inv[c * m + k];
      }
    }
  }
  return true;
}

class InverseKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const DType dt = x->dtype();
    if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kFloat16) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "the input is " + std::string(dtype_name(dt)) +
                           "; Inverse takes float16, float32 or float64");
    }
    if (x->rank() < 2 || x->dim(-1) != x->dim(-2)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "the input must have shape [*, M, M], got " + shape_to_string(x->shape()));
    }
    auto xs = read_as_double(*x, "X");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x->shape()));
    const int64_t m = x->dim(-1);
    std::vector<double> out(xs->size());
    for (size_t at = 0; at < out.size(); at += static_cast<size_t>(m * m)) {
      if (!invert(xs->data() + at, out.data() + at, m)) {
        std::fill(out.begin() + static_cast<ptrdiff_t>(at),
                  out.begin() + static_cast<ptrdiff_t>(at + static_cast<size_t>(m * m)),
                  std::numeric_limits<double>::quiet_NaN());
      }
    }
    write_from_double(out, *y);
    return ok_status();
  }
};

}  // namespace

void register_inverse(Registrar& r) {
  r.add({.op_type = "Inverse",
         .domain = "com.microsoft",
         .since = 1,
         .create = make_simple<InverseKernel>()},
        infer_same_as_input0);
}

}  // namespace recur::reference
