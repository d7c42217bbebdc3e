// Gemm (opsets 1, 6, 7, 9, 11, 13): Y = alpha * op(A) * op(B) + beta * C. C broadcasts
// unidirectionally to [M, N] (before opset 7 only with broadcast=1) and is optional from
// opset 11.
#include "providers/reference/common/gemm.h"
#include <algorithm>
#include <cmath>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

constexpr TypeList<int32_t, int64_t, uint32_t, uint64_t> kGemmIntTypes{};

struct GemmAttrs {
  bool trans_a = false, trans_b = false, legacy_broadcast = true;
  float alpha = 1.0f, beta = 1.0f;
};

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(GemmAttrs a) : a_(a) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    const Tensor* c = ctx.input(2);
    if (a->rank() != 2 || b->rank() != 2) {
      return invalid_argument("A and B must be 2-D, got " + shape_to_string(a->shape()) + " and " +
                              shape_to_string(b->shape()));
    }
    if (a->dtype() != b->dtype() || (c && c->dtype() != a->dtype())) {
      return invalid_argument("A, B and C must have the same dtype");
    }
    const int64_t m = a_.trans_a ? a->dim(1) : a->dim(0);
    const int64_t k = a_.trans_a ? a->dim(0) : a->dim(1);
    const int64_t kb = a_.trans_b ? b->dim(1) : b->dim(0);
    const int64_t n = a_.trans_b ? b->dim(0) : b->dim(1);
    if (k != kb) {
      return invalid_argument("inner dimensions do not match: A " + shape_to_string(a->shape()) +
                              (a_.trans_a ? " (transposed)" : "") + ", B " +
                              shape_to_string(b->shape()) + (a_.trans_b ? " (transposed)" : ""));
    }
    const Shape ys{m, n};
    if (c) {
      const bool ok = a_.legacy_broadcast ? broadcastable_to(c->shape(), ys) : c->shape() == ys;
      if (!ok) {
        return invalid_argument("C " + shape_to_string(c->shape()) + " does not broadcast to " +
                                shape_to_string(ys));
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a->dtype(), ys));
    const Shape c_shape = c ? c->shape() : Shape{};
    const bool use_c = c && a_.beta != 0.0f;
    bool handled = visit_dtype(kNnFloatTypes, a->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      ComputeView<T> av(*a), bv(*b);
      ComputeOut<T> yv(*y);
      C* yp = yv.data();
      if (use_c) {
        ComputeView<T> cv(*c);
        const C beta = static_cast<C>(a_.beta);
        for_each_broadcast<1>(ys, {&c_shape}, [&](int64_t i, const std::array<int64_t, 1>& off) {
          yp[i] = beta * cv.data()[off[0]];
        });
      }
      gemm<C>(a_.trans_a, a_.trans_b, m, n, k, static_cast<C>(a_.alpha), av.data(),
              a_.trans_a ? m : k, bv.data(), a_.trans_b ? k : n, use_c ? C(1) : C(0), yp, n);
      yv.flush();
    });
    if (!handled) {
      handled = visit_dtype(kGemmIntTypes, a->dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* yp = y->data<T>();
        matmul_int_wrapping<T>(a_.trans_a, a_.trans_b, m, n, k, a->data<T>(), b->data<T>(), yp);
        const bool unit = a_.alpha == 1.0f && a_.beta == 1.0f;
        const T* cp = use_c ? c->data<T>() : nullptr;
        for_each_broadcast<1>(ys, {&c_shape}, [&](int64_t i, const std::array<int64_t, 1>& off) {
          if (unit) {
            // Integer wrap-around, as numpy.
            yp[i] = cp ? static_cast<T>(static_cast<uint64_t>(yp[i]) +
                                        static_cast<uint64_t>(cp[off[0]]))
                       : yp[i];
          } else {
            double v = static_cast<double>(a_.alpha) * static_cast<double>(yp[i]);
            if (cp) v += static_cast<double>(a_.beta) * static_cast<double>(cp[off[0]]);
            // Clamped so that a huge alpha or beta cannot overflow the conversion.
            constexpr double kLimit = 9.2e18;
            v = std::isnan(v) ? 0.0 : std::max(-kLimit, std::min(kLimit, v));
            yp[i] = static_cast<T>(static_cast<int64_t>(v));
          }
        });
      });
    }
    if (!handled) return not_implemented("dtype " + dtype_str(a->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  GemmAttrs a_;
};

Status infer_gemm(InferContext& ctx) {
  AttrReader r(ctx.node());
  const bool ta = r.get_int("transA", 0) != 0, tb = r.get_int("transB", 0) != 0;
  RECUR_RETURN_IF_ERROR(r.status());
  const TypeInfo& a = ctx.input_type(0);
  const TypeInfo& b = ctx.input_type(1);
  TypeInfo out;
  out.dtype = a.dtype;
  if (a.rank() == 2 && b.rank() == 2) {
    const Dim ka = (*a.shape)[ta ? 0 : 1], kb = (*b.shape)[tb ? 1 : 0];
    if (ka.is_fixed() && kb.is_fixed() && ka.value != kb.value) {
      return ctx.error("inner dimensions do not match: " + a.to_string() + " and " + b.to_string());
    }
    out.shape = std::vector<Dim>{(*a.shape)[ta ? 1 : 0], (*b.shape)[tb ? 0 : 1]};
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_gemm(Registrar& r) {
  r.add({.op_type = "Gemm",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           GemmAttrs a;
           a.trans_a = r.get_int("transA", 0) != 0;
           a.trans_b = r.get_int("transB", 0) != 0;
           a.alpha = r.get_float("alpha", 1.0f);
           a.beta = r.get_float("beta", 1.0f);
           if (ctx.opset() < 7) a.legacy_broadcast = r.get_int("broadcast", 0) != 0;
           RECUR_RETURN_IF_ERROR(r.status());
           if (ctx.opset() < 11 && !ctx.has_input(2)) {
             return ctx.error(ErrorCode::kInvalidModel, "input C is required before opset 11");
           }
           return std::make_unique<GemmKernel>(a);
         }},
        infer_gemm);
}

}  // namespace recur::reference
