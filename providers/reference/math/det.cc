// Det (opset 11): the determinant of each [M, M] matrix of a [*, M, M] input, by LU
// decomposition with partial pivoting in double precision. Output [*].
#include <cmath>
#include <utility>

#include "providers/reference/common/util.h"
#include "providers/reference/math/math.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

double determinant(double* a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) pivot = r;
    if (a[pivot * m + c] == 0.0) return 0.0;
    if (pivot != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[pivot * m + k]);
      det = -det;
    }
    const double p = a[c * m + c];
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / p;
      for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() < 2 || x->dim(-1) != x->dim(-2)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "the input must have shape [*, M, M], got " + shape_to_string(x->shape()));
    }
    auto xs = read_as_double(*x, "X");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    const int64_t m = x->dim(-1);
    const Shape out_shape(x->shape().begin(), x->shape().end() - 2);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    std::vector<double> dets(static_cast<size_t>(y->numel()));
    for (size_t b = 0; b < dets.size(); ++b)
      dets[b] = determinant(xs->data() + static_cast<int64_t>(b) * m * m, m);
    write_from_double(dets, *y);
    return ok_status();
  }
};

Status infer_det(InferContext& ctx) {
  const TypeInfo& in = ctx.input_type(0);
  TypeInfo t;
  t.dtype = in.dtype;
  if (in.rank() >= 2) t.shape = std::vector<Dim>(in.shape->begin(), in.shape->end() - 2);
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_det(Registrar& r) {
  r.add({.op_type = "Det", .since = 11, .create = make_simple<DetKernel>()}, infer_det);
}

}  // namespace recur::reference
