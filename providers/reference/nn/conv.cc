// Conv (opsets 1, 11): N-d convolution with groups, dilations, strides, pads and auto_pad,
// computed as im2col + GEMM; recur::FusedConv (runtime/graph/fused_conv.h), the same with its
// activation applied to the output; and recur::BlockedConv (runtime/graph/blocked.h), either of
// those on channel-blocked X and Y, copied out of and back into the blocked form around it.
#include <cmath>

#include "providers/reference/common/blocked_copy.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"
#include "runtime/graph/blocked.h"
#include "runtime/graph/fused_conv.h"

namespace recur::reference {

Result<ConvShapes> check_conv_shapes(const WindowAttrs& attrs, int64_t group, const Shape& x,
                                     const Shape& w, const char* x_name, const char* w_name) {
  if (x.size() < 3) {
    return invalid_argument(std::string(x_name) +
                            " must have rank >= 3 ([N, C, spatial...]), got " + shape_to_string(x));
  }
  if (w.size() != x.size()) {
    return invalid_argument(std::string(w_name) + " " + shape_to_string(w) +
                            " must have the rank of " + x_name + " " + shape_to_string(x));
  }
  if (group <= 0) return invalid_argument("group " + std::to_string(group) + " must be positive");
  ConvShapes s;
  s.n = x[0];
  s.c = x[1];
  s.m = w[0];
  if (s.c % group != 0) {
    return invalid_argument("input channels " + std::to_string(s.c) +
                            " are not divisible by group " + std::to_string(group));
  }
  if (s.m % group != 0) {
    return invalid_argument("output channels " + std::to_string(s.m) +
                            " are not divisible by group " + std::to_string(group));
  }
  if (w[1] != s.c / group) {
    return invalid_argument(std::string(w_name) + " " + shape_to_string(w) + " should have " +
                            std::to_string(s.c / group) + " channels per group (" + x_name +
                            " has " + std::to_string(s.c) + " channels, group " +
                            std::to_string(group) + ")");
  }
  const Shape kernel(w.begin() + 2, w.end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != kernel) {
    return invalid_argument("kernel_shape does not match the weights " + shape_to_string(w));
  }
  const Shape in(x.begin() + 2, x.end());
  RECUR_ASSIGN_OR_RETURN(s.win, resolve_window(attrs, in, kernel));
  s.y = {s.n, s.m};
  s.y.insert(s.y.end(), s.win.out.begin(), s.win.out.end());
  RECUR_RETURN_IF_ERROR(checked_numel(s.y, "the output shape").status());
  // The im2col buffer of one group.
  RECUR_RETURN_IF_ERROR(
      checked_numel({s.c / group, s.win.kernel_size(), s.win.out_size()}, "the im2col buffer")
          .status());
  return s;
}

namespace {

// A convolution's output dims for X and W of these types, or nullopt where X's rank is unknown.
Result<std::optional<std::vector<Dim>>> conv_output_dims(const Node& node, const TypeInfo& x,
                                                         const TypeInfo& w) {
  if (!x.has_rank() || x.rank() < 3) return std::optional<std::vector<Dim>>();
  auto wa = read_window_attrs(node);
  if (!wa.ok()) return wa.status();
  std::vector<int64_t> kernel = wa->kernel_shape;
  if (kernel.empty() && w.has_rank()) {
    for (size_t i = 2; i < w.shape->size(); ++i) kernel.push_back((*w.shape)[i].value);
  }
  std::vector<Dim> dims{(*x.shape)[0], w.has_rank() && w.rank() > 0 ? (*w.shape)[0] : Dim{}};
  const std::vector<Dim> in(x.shape->begin() + 2, x.shape->end());
  bool kernel_known = kernel.size() == in.size();
  for (int64_t k : kernel) kernel_known &= k > 0;
  if (kernel_known) {
    for (const Dim& d : infer_window_dims(*wa, in, kernel)) dims.push_back(d);
  } else {
    dims.resize(x.shape->size());
  }
  return std::optional<std::vector<Dim>>(std::move(dims));
}

}  // namespace

Status infer_conv_like(InferContext& ctx, DType out_dtype, size_t w_index) {
  TypeInfo out;
  out.dtype = out_dtype;
  RECUR_ASSIGN_OR_RETURN(out.shape,
                         conv_output_dims(ctx.node(), ctx.input_type(0), ctx.input_type(w_index)));
  ctx.set_output(0, out);
  return ok_status();
}

namespace {

// The activation of a recur::FusedConv, applied in the compute type as the Relu, LeakyRelu,
// Sigmoid and HardSwish kernels do (math/unary.cc, math/activation.cc), so that fusion does not
// change the values.
enum class Activation { kNone, kRelu, kLeakyRelu, kSigmoid, kHardSwish };

template <class C>
void activate(Activation act, float alpha, C* y, int64_t n) {
  if (act == Activation::kRelu) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] < C(0) ? C(0) : y[i];  // NaN stays NaN
  } else if (act == Activation::kLeakyRelu) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] < C(0) ? C(alpha) * y[i] : y[i];
  } else if (act == Activation::kHardSwish) {
    for (int64_t i = 0; i < n; ++i) {
      const C g = y[i] / C(6) + C(0.5);  // NaN stays NaN through the comparisons
      y[i] = y[i] * (g < C(0) ? C(0) : g > C(1) ? C(1) : g);
    }
  } else if (act == Activation::kSigmoid) {
    for (int64_t i = 0; i < n; ++i) {
      const C x = y[i];
      if (x >= 0) {
        y[i] = C(1) / (C(1) + std::exp(-x));
      } else {
        const C e = std::exp(x);
        y[i] = e / (C(1) + e);
      }
    }
  }
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(WindowAttrs attrs, int64_t group, Activation act, float alpha, int64_t block)
      : attrs_(std::move(attrs)), group_(group), act_(act), alpha_(alpha), block_(block) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
    const Tensor* b = ctx.input(2);
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype())) {
      return invalid_argument("X, W and B must have the same dtype");
    }
    if (block_ == 0) {
      RECUR_ASSIGN_OR_RETURN(ConvShapes s, shapes(*x, *w, b));
      RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s.y));
      return compute(s, *x, *w, b, *y);
    }
    // X blocked (by its last axis: Y's block, or all its channels in a channels-last chain),
    // or plain for a chain's first convolution.
    const bool x_blocked = x->rank() == 5;
    const int64_t x_block = x_blocked ? x->shape().back() : 0;
    if (!blockable_dtype(x->dtype()) || (x_blocked && x_block < 1)) {
      return invalid_argument("X " + shape_to_string(x->shape()) +
                              " is not [N, C/b, H, W, b] or [N, C, H, W]");
    }
    Tensor xp = *x;
    if (x_blocked) {
      RECUR_ASSIGN_OR_RETURN(Shape plain, unblocked_shape(x->shape(), "X"));
      xp = Tensor::empty(x->dtype(), plain);
      const int64_t N = plain[0], C = plain[1];
      if (xp.numel() > 0) {
        copy_channel_blocks(false, x->raw_data(), xp.raw_data(), N, C, xp.numel() / (N * C),
                            x_block, dtype_size(x->dtype()));
      }
    }
    RECUR_ASSIGN_OR_RETURN(ConvShapes s, shapes(xp, *w, b));
    RECUR_ASSIGN_OR_RETURN(Shape out, blocked_shape(s.y, block_, "the output"));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
    Tensor yp = Tensor::empty(x->dtype(), s.y);
    RECUR_RETURN_IF_ERROR(compute(s, xp, *w, b, yp));
    if (yp.numel() > 0) {
      copy_channel_blocks(true, yp.raw_data(), y->raw_data(), s.y[0], s.y[1],
                          yp.numel() / (s.y[0] * s.y[1]), block_, dtype_size(x->dtype()));
    }
    return ok_status();
  }

 private:
  Result<ConvShapes> shapes(const Tensor& x, const Tensor& w, const Tensor* b) const {
    RECUR_ASSIGN_OR_RETURN(ConvShapes s,
                           check_conv_shapes(attrs_, group_, x.shape(), w.shape(), "X", "W"));
    if (b && (b->rank() != 1 || b->dim(0) != s.m)) {
      return invalid_argument("B " + shape_to_string(b->shape()) + " should be [" +
                              std::to_string(s.m) + "]");
    }
    return s;
  }

  Status compute(const ConvShapes& s, const Tensor& xt, const Tensor& wt, const Tensor* b,
                 Tensor& yt) const {
    const Tensor* x = &xt;
    const Tensor* w = &wt;
    Tensor* y = &yt;
    const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      ComputeView<T> xv(*x), wv(*w);
      ComputeOut<T> yv(*y);
      C* yp = yv.data();
      conv_forward<C>(xv.data(), wv.data(), s.n, s.c, s.m, group_, s.win, C(0), yp);
      if (b) {
        ComputeView<T> bv(*b);
        const int64_t P = s.win.out_size();
        for (int64_t n = 0; n < s.n; ++n)
          for (int64_t m = 0; m < s.m; ++m) {
            C* row = yp + (n * s.m + m) * P;
            const C bias = bv.data()[m];
            for (int64_t p = 0; p < P; ++p) row[p] += bias;
          }
      }
      activate(act_, alpha_, yp, y->numel());
      yv.flush();
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
  }

  WindowAttrs attrs_;
  int64_t group_;
  Activation act_;
  float alpha_;    // LeakyRelu's
  int64_t block_;  // BlockedConv's channel block; 0 for a Conv or FusedConv
};

Result<std::unique_ptr<Kernel>> create_conv(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(WindowAttrs a, read_window_attrs(ctx.node()));
  AttrReader r(ctx.node());
  const int64_t group = r.get_int("group", 1);
  const std::string act = r.get_string(kFusedConvActivation, "");
  const float alpha = r.get_float(kFusedConvAlpha, 0.01f);
  RECUR_RETURN_IF_ERROR(r.status());
  if (group <= 0) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "group " + std::to_string(group) + " must be positive");
  }
  const bool blocked = ctx.node().op_type == kBlockedConvOp;
  const int64_t block = blocked ? r.get_int(kBlockAttr, 0) : 0;
  RECUR_RETURN_IF_ERROR(r.status());
  if (blocked && block < 1) {
    return ctx.error(ErrorCode::kInvalidModel, "a BlockedConv needs a positive block");
  }
  Activation activation = Activation::kNone;
  if (ctx.node().op_type == kFusedConvOp || (blocked && !act.empty())) {
    if (act == "Relu") {
      activation = Activation::kRelu;
    } else if (act == "LeakyRelu") {
      activation = Activation::kLeakyRelu;
    } else if (act == "Sigmoid") {
      activation = Activation::kSigmoid;
    } else if (act == "HardSwish") {
      activation = Activation::kHardSwish;
    } else {
      return ctx.error(ErrorCode::kInvalidModel,
                       "attribute 'activation' is '" + act +
                           "'; a FusedConv takes Relu, LeakyRelu, Sigmoid or HardSwish");
    }
  }
  return std::make_unique<ConvKernel>(std::move(a), group, activation, alpha, block);
}

// A BlockedConv's output: the Conv's of the plain X it holds, blocked.
Status infer_blocked_conv(InferContext& ctx) {
  AttrReader a(ctx.node());
  const int64_t block = a.get_int(kBlockAttr, 0);
  RECUR_RETURN_IF_ERROR(a.status());
  const TypeInfo& xb = ctx.input_type(0);
  // X [N, C, H, W] as it is (a chain's first convolution), or blocked.
  TypeInfo x = xb;
  if (xb.has_rank() && xb.rank() == 5) {
    std::vector<Dim> dims(xb.shape->begin(), xb.shape->end() - 1);
    const Dim blocks = dims[1], x_block = xb.shape->back();
    dims[1] = Dim{};
    if (blocks.is_fixed() && x_block.is_fixed()) dims[1].value = blocks.value * x_block.value;
    x.shape = std::move(dims);
  }
  RECUR_ASSIGN_OR_RETURN(std::optional<std::vector<Dim>> dims,
                         conv_output_dims(ctx.node(), x, ctx.input_type(1)));
  TypeInfo out;
  out.dtype = xb.dtype;
  if (dims) {
    const Dim m = (*dims)[1];
    (*dims)[1] = Dim{};
    if (m.is_fixed() && block > 0) {
      if (m.value % block != 0)
        return ctx.error("W's output channels are not whole blocks of " + std::to_string(block));
      (*dims)[1].value = m.value / block;
    }
    dims->push_back(Dim{block > 0 ? block : -1, {}});
    out.shape = std::move(dims);
  }
  ctx.set_output(0, out);
  return ok_status();
}

}  // namespace

void register_conv(Registrar& r) {
  auto infer = [](InferContext& ctx) { return infer_conv_like(ctx, ctx.input_type(0).dtype); };
  r.add({.op_type = "Conv", .since = 1, .create = create_conv}, infer);
  r.add({.op_type = kFusedConvOp, .domain = kFusedConvDomain, .since = 1, .create = create_conv},
        infer);
  r.add({.op_type = kBlockedConvOp, .domain = kBlockedDomain, .since = 1, .create = create_conv},
        infer_blocked_conv);
}

}  // namespace recur::reference
