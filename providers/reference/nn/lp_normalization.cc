// LpNormalization (opset 1): x divided by its L1 or L2 norm along `axis`. A zero norm gives
// zeros rather than NaN.
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(int64_t axis, int64_t p) : axis_(axis), p_(p) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, x->rank(), "axis"));
    const Shape& s = x->shape();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= s[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < x->rank(); ++d) inner *= s[static_cast<size_t>(d)];
    const int64_t len = s[static_cast<size_t>(axis)];
    if (!visit_dtype(kNnFloatTypes, x->dtype(), [](auto) {})) {
      return invalid_argument("input has unsupported dtype " + dtype_str(x->dtype()));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s));
    visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      normalize<T>(x->data<T>(), y->data<T>(), outer, len, inner);
    });
    return ok_status();
  }

 private:
  // The norm of each vector in double, its terms added in order; each value divided by it in
  // double and rounded once into T. The vectors along the last axis go four at a time (four
  // independent sums); strided ones all the inner positions of a row at once.
  template <class T>
  void normalize(const T* x, T* y, int64_t outer, int64_t len, int64_t inner) const {
    using C = compute_t<T>;
    auto term = [&](T v) {
      const double d = static_cast<double>(static_cast<C>(v));
      return p_ == 1 ? std::fabs(d) : d * d;
    };
    auto write = [&](const T* xv, T* yv, int64_t stride, double norm) {
      if (p_ == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < len; ++k) {
        const double v = static_cast<double>(static_cast<C>(xv[k * stride]));
        yv[k * stride] = static_cast<T>(static_cast<C>(norm == 0 ? 0.0 : v / norm));
      }
    };
    if (inner == 1) {
      int64_t o = 0;
      for (; o + 4 <= outer; o += 4) {
        const T* xv = x + o * len;
        double n0 = 0, n1 = 0, n2 = 0, n3 = 0;
        for (int64_t k = 0; k < len; ++k) {
          n0 += term(xv[k]);
          n1 += term(xv[len + k]);
          n2 += term(xv[2 * len + k]);
          n3 += term(xv[3 * len + k]);
        }
        const double norms[4] = {n0, n1, n2, n3};
        for (int j = 0; j < 4; ++j) write(xv + j * len, y + (o + j) * len, 1, norms[j]);
      }
      for (; o < outer; ++o) {
        double norm = 0;
        for (int64_t k = 0; k < len; ++k) norm += term(x[o * len + k]);
        write(x + o * len, y + o * len, 1, norm);
      }
      return;
    }
    std::vector<double> norms(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      const T* xo = x + o * len * inner;
      std::fill(norms.begin(), norms.end(), 0.0);
      for (int64_t k = 0; k < len; ++k)
        for (int64_t i = 0; i < inner; ++i)
          norms[static_cast<size_t>(i)] += term(xo[k * inner + i]);
      for (int64_t i = 0; i < inner; ++i)
        write(xo + i, y + o * len * inner + i, inner, norms[static_cast<size_t>(i)]);
    }
  }

 private:
  int64_t axis_, p_;
};

}  // namespace

void register_lp_normalization(Registrar& r) {
  r.add({.op_type = "LpNormalization",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t axis = r.get_int("axis", -1);
           const int64_t p = r.get_int("p", 2);
           RECUR_RETURN_IF_ERROR(r.status());
           if (p != 1 && p != 2) return ctx.error(ErrorCode::kInvalidModel, "p must be 1 or 2");
           return std::make_unique<LpNormKernel>(axis, p);
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
