// ConvTranspose (opsets 1, 11): the adjoint of Conv, computed as GEMM + col2im, with
// output_padding, output_shape and auto_pad.
#include <algorithm>

#include "providers/reference/common/gemm.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"
#include "runtime/graph/conv_transpose_shape.h"

namespace recur::reference {

namespace {

struct TransposeShapes {
  int64_t n = 0, c = 0, m = 0;
  Window win;  // in = Y's spatial size, out = X's
  Shape y;
};

// The shared geometry (runtime/graph/conv_transpose_shape.h) as the window col2im walks.
Result<TransposeShapes> resolve(const ConvTransposeAttrs& a, const Shape& x, const Shape& w) {
  RECUR_ASSIGN_OR_RETURN(ConvTransposeShape g, resolve_conv_transpose(a, x, w));
  TransposeShapes s;
  s.n = g.n;
  s.c = g.c;
  s.m = g.m;
  s.y = g.y;
  Window& win = s.win;
  win.kernel = g.kernel;
  win.stride = g.stride;
  win.dilation = g.dilation;
  win.out = g.x_spatial;
  win.in = g.y_spatial;
  win.pad_begin = g.pad_begin;
  win.pad_end = g.pad_end;
  RECUR_RETURN_IF_ERROR(checked_numel(s.y, "the output shape").status());
  RECUR_RETURN_IF_ERROR(
      checked_numel({w[1], win.kernel_size(), win.out_size()}, "the column buffer").status());
  return s;
}

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(ConvTransposeAttrs a) : a_(std::move(a)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
    const Tensor* b = ctx.input(2);
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype())) {
      return invalid_argument("X, W and B must have the same dtype");
    }
    RECUR_ASSIGN_OR_RETURN(TransposeShapes s, resolve(a_, x->shape(), w->shape()));
    if (b && (b->rank() != 1 || b->dim(0) != s.m)) {
      return invalid_argument("B " + shape_to_string(b->shape()) + " should be [" +
                              std::to_string(s.m) + "]");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s.y));
    const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      ComputeView<T> xv(*x), wv(*w);
      ComputeOut<T> yv(*y);
      C* yp = yv.data();
      const int64_t g = a_.group, cg = s.c / g, mg = s.m / g;
      const int64_t K = s.win.kernel_size(), p_in = s.win.out_size(), p_out = s.win.in_size();
      std::fill(yp, yp + s.n * s.m * p_out, C(0));
      thread_local std::vector<C> col;  // kept from run to run: no allocation once warm
      col.resize(static_cast<size_t>(mg * K * p_in));
      for (int64_t n = 0; n < s.n; ++n) {
        for (int64_t gi = 0; gi < g; ++gi) {
          const C* xg = xv.data() + (n * s.c + gi * cg) * p_in;
          const C* wg = wv.data() + gi * cg * mg * K;
          gemm<C>(true, false, mg * K, p_in, cg, C(1), wg, mg * K, xg, p_in, C(0), col.data(),
                  p_in);
          col2im_add(col.data(), mg, s.win, yp + (n * s.m + gi * mg) * p_out);
        }
      }
      if (b) {
        ComputeView<T> bv(*b);
        for (int64_t n = 0; n < s.n; ++n)
          for (int64_t m = 0; m < s.m; ++m) {
            C* row = yp + (n * s.m + m) * p_out;
            for (int64_t p = 0; p < p_out; ++p) row[p] += bv.data()[m];
          }
      }
      yv.flush();
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  ConvTransposeAttrs a_;
};

Status infer_conv_transpose(InferContext& ctx) {
  TypeInfo out;
  out.dtype = ctx.input_type(0).dtype;
  const TypeInfo& x = ctx.input_type(0);
  const TypeInfo& w = ctx.input_type(1);
  if (x.has_rank()) {
    std::vector<Dim> dims(x.shape->size());
    if (x.is_static() && w.is_static()) {
      auto a = ConvTransposeAttrs::read(ctx.node());
      if (!a.ok()) return a.status();
      auto s = resolve(*a, x.static_shape(), w.static_shape());
      if (s.ok()) {
        for (size_t i = 0; i < dims.size(); ++i) dims[i].value = s->y[i];
      }
    } else if (!dims.empty()) {
      dims[0] = (*x.shape)[0];
    }
    out.shape = dims;
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_conv_transpose(Registrar& r) {
  r.add({.op_type = "ConvTranspose",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(ConvTransposeAttrs a, ConvTransposeAttrs::read(ctx.node()));
           return std::make_unique<ConvTransposeKernel>(std::move(a));
         }},
        infer_conv_transpose);
}

}  // namespace recur::reference
