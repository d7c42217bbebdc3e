// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: pooling over every spatial dimension.
#include <cmath>
#include <limits>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

Result<double> read_lp_exponent(const Node& node);  // lp_pool.cc

namespace {

enum class GlobalKind { kAverage, kMax, kLp };

class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(GlobalKind kind, double p) : kind_(kind), p_(p) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() < 2) {
      return invalid_argument("X must have rank >= 2 ([N, C, spatial...]), got " +
                              shape_to_string(x->shape()));
    }
    Shape ys(x->shape().size(), 1);
    ys[0] = x->dim(0);
    ys[1] = x->dim(1);
    const int64_t nc = ys[0] * ys[1];
    const int64_t size = nc == 0 ? 0 : x->numel() / nc;
    if (size == 0 && kind_ == GlobalKind::kMax && nc > 0) {
      return invalid_argument("cannot take the maximum over empty spatial dimensions");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), ys));
    const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* xp = x->data<T>();
      T* yp = y->data<T>();
      for (int64_t i = 0; i < nc; ++i) {
        const T* xc = xp + i * size;
        double acc = kind_ == GlobalKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t j = 0; j < size; ++j) {
          const double v = static_cast<double>(static_cast<C>(xc[j]));
          switch (kind_) {
            case GlobalKind::kAverage:
              acc += v;
              break;
            case GlobalKind::kMax:
              acc = v > acc ? v : acc;
              break;
            case GlobalKind::kLp:
              acc += std::pow(std::fabs(v), p_);
              break;
          }
        }
        if (kind_ == GlobalKind::kAverage) acc = size ? acc / static_cast<double>(size) : 0.0;
        if (kind_ == GlobalKind::kLp) acc = std::pow(acc, 1.0 / p_);
        yp[i] = static_cast<T>(static_cast<C>(acc));
      }
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  GlobalKind kind_;
  double p_;
};

Status infer_global(InferContext& ctx) {
  TypeInfo out;
  const TypeInfo& x = ctx.input_type(0);
  out.dtype = x.dtype;
  if (x.has_rank() && x.rank() >= 2) {
    std::vector<Dim> dims(x.shape->size());
    dims[0] = (*x.shape)[0];
    dims[1] = (*x.shape)[1];
    for (size_t i = 2; i < dims.size(); ++i) dims[i].value = 1;
    out.shape = dims;
  }
  ctx.set_output(0, out);
  return ok_status();
}

void add_global(Registrar& r, const char* name, GlobalKind kind) {
  r.add({.op_type = name,
         .since = 1,
         .create = [kind](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           double p = 2.0;
           if (kind == GlobalKind::kLp) {
             RECUR_ASSIGN_OR_RETURN(p, read_lp_exponent(ctx.node()));
           }
           return std::make_unique<GlobalPoolKernel>(kind, p);
         }},
        infer_global);
}

}  // namespace

void register_global_pool(Registrar& r) {
  add_global(r, "GlobalAveragePool", GlobalKind::kAverage);
  add_global(r, "GlobalMaxPool", GlobalKind::kMax);
  add_global(r, "GlobalLpPool", GlobalKind::kLp);
}

}  // namespace recur::reference
