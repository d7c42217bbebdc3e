// ConvTranspose (opsets 1, 11): the adjoint of Conv, computed as GEMM + col2im, with
// output_padding, output_shape and auto_pad.
#include <algorithm>

#include "providers/reference/common/gemm.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

struct TransposeAttrs {
  WindowAttrs win;
  int64_t group = 1;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> output_shape;
};

struct TransposeShapes {
  int64_t n = 0, c = 0, m = 0;
  Window win;  // in = Y's spatial size, out = X's
  Shape y;
};

Result<TransposeShapes> resolve(const TransposeAttrs& a, const Shape& x, const Shape& w) {
  if (x.size() < 3) {
    return invalid_argument("X must have rank >= 3 ([N, C, spatial...]), got " +
                            shape_to_string(x));
  }
  if (w.size() != x.size()) {
    return invalid_argument("W " + shape_to_string(w) + " must have the rank of X " +
                            shape_to_string(x));
  }
  const size_t r = x.size() - 2;
  const int64_t g = a.group;
  if (g <= 0) return invalid_argument("group must be positive");
  TransposeShapes s;
  s.n = x[0];
  s.c = x[1];
  if (s.c % g != 0) {
    return invalid_argument("input channels " + std::to_string(s.c) +
                            " are not divisible by group " + std::to_string(g));
  }
  if (w[0] != s.c) {
    return invalid_argument("W " + shape_to_string(w) + " should have " + std::to_string(s.c) +
                            " input channels, as X " + shape_to_string(x) + " has");
  }
  s.m = w[1] * g;
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (!a.win.kernel_shape.empty() && a.win.kernel_shape != kernel) {
    return invalid_argument("kernel_shape does not match the weights " + shape_to_string(w));
  }
  auto len_ok = [&](const std::vector<int64_t>& v, size_t n) { return v.empty() || v.size() == n; };
  if (!len_ok(a.win.strides, r) || !len_ok(a.win.dilations, r) || !len_ok(a.output_padding, r) ||
      (a.win.auto_pad == "NOTSET" && !len_ok(a.win.pads, 2 * r))) {
    return invalid_argument(
        "strides, dilations, output_padding or pads have the wrong length "
        "for " +
        std::to_string(r) + " spatial dimensions");
  }
  std::vector<int64_t> out_shape;
  if (!a.output_shape.empty()) {
    if (a.output_shape.size() < r) {
      return invalid_argument("output_shape has fewer values than spatial dimensions");
    }
    out_shape.assign(a.output_shape.end() - static_cast<std::ptrdiff_t>(r), a.output_shape.end());
  }
  Window& win = s.win;
  win.kernel = kernel;
  win.stride = a.win.strides.empty() ? Shape(r, 1) : a.win.strides;
  win.dilation = a.win.dilations.empty() ? Shape(r, 1) : a.win.dilations;
  win.out.assign(x.begin() + 2, x.end());
  win.in.assign(r, 0);
  win.pad_begin.assign(r, 0);
  win.pad_end.assign(r, 0);
  constexpr int64_t kMax = int64_t{1} << 31;
  for (size_t i = 0; i < r; ++i) {
    const int64_t k = kernel[i], st = win.stride[i], d = win.dilation[i], in = win.out[i];
    const int64_t op = a.output_padding.empty() ? 0 : a.output_padding[i];
    if (k <= 0 || k > kMax || st <= 0 || st > kMax || d <= 0 || d > kMax || op < 0 || op > kMax ||
        in > kMax) {
      return invalid_argument(
          "kernel, strides, dilations and output_padding must be positive "
          "(output_padding non-negative)");
    }
    const int64_t ek = (k - 1) * d + 1;
    const int64_t full = st * (in - 1) + op + ek;
    if (!out_shape.empty() || a.win.auto_pad == "SAME_UPPER" || a.win.auto_pad == "SAME_LOWER") {
      const int64_t want = out_shape.empty() ? in * st : out_shape[i];
      if (want <= 0 || want > kMax) {
        return invalid_argument("output_shape value " + std::to_string(want) + " is invalid");
      }
      const int64_t total = full - want;
      if (a.win.auto_pad == "SAME_UPPER") {
        win.pad_begin[i] = floor_div2(total);
        win.pad_end[i] = total - floor_div2(total);
      } else {
        win.pad_begin[i] = total - floor_div2(total);
        win.pad_end[i] = floor_div2(total);
      }
      win.in[i] = want;
    } else {
      if (a.win.auto_pad == "NOTSET" && !a.win.pads.empty()) {
        win.pad_begin[i] = a.win.pads[i];
        win.pad_end[i] = a.win.pads[i + r];
      }
      if (win.pad_begin[i] < 0 || win.pad_end[i] < 0 || win.pad_begin[i] > kMax ||
          win.pad_end[i] > kMax) {
        return invalid_argument("pads must be non-negative");
      }
      win.in[i] = full - win.pad_begin[i] - win.pad_end[i];
      if (win.in[i] <= 0) {
        return invalid_argument("pads leave no output along spatial dimension " +
                                std::to_string(i));
      }
    }
  }
  s.y = {s.n, s.m};
  s.y.insert(s.y.end(), win.in.begin(), win.in.end());
  RECUR_RETURN_IF_ERROR(checked_numel(s.y, "the output shape").status());
  RECUR_RETURN_IF_ERROR(
      checked_numel({w[1], win.kernel_size(), win.out_size()}, "the column buffer").status());
  return s;
}

Result<TransposeAttrs> read_attrs(const Node& node) {
  TransposeAttrs a;
  RECUR_ASSIGN_OR_RETURN(a.win, read_window_attrs(node));
  AttrReader r(node);
  a.group = r.get_int("group", 1);
  a.output_padding = r.get_ints("output_padding");
  a.output_shape = r.get_ints("output_shape");
  RECUR_RETURN_IF_ERROR(r.status());
  if (a.group <= 0) return invalid_model(node.describe() + ": group must be positive");
  return a;
}

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(TransposeAttrs a) : a_(std::move(a)) {}

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
      std::vector<C> col(static_cast<size_t>(mg * K * p_in));
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
  TransposeAttrs a_;
};

Status infer_conv_transpose(InferContext& ctx) {
  TypeInfo out;
  out.dtype = ctx.input_type(0).dtype;
  const TypeInfo& x = ctx.input_type(0);
  const TypeInfo& w = ctx.input_type(1);
  if (x.has_rank()) {
    std::vector<Dim> dims(x.shape->size());
    if (x.is_static() && w.is_static()) {
      auto a = read_attrs(ctx.node());
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
           RECUR_ASSIGN_OR_RETURN(TransposeAttrs a, read_attrs(ctx.node()));
           return std::make_unique<ConvTransposeKernel>(std::move(a));
         }},
        infer_conv_transpose);
}

}  // namespace recur::reference
