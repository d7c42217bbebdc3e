// Conv (1-D to 3-D, groups, dilations, auto_pad) through oneDNN's convolution, in plain
// layouts: the weights are read where they are, so W may also be a graph input. A
// recur::FusedConv (runtime/graph/fused_conv.h) runs its activation as an eltwise post-op.
#include <optional>
#include <tuple>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"
#include "providers/onednn/nn/window.h"
#include "runtime/graph/fused_conv.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

class ConvKernel final : public Kernel {
 public:
  ConvKernel(WindowAttrs attrs, int64_t group, int threads, std::optional<dnnl::algorithm> post_op)
      : attrs_(std::move(attrs)), group_(group), threads_(threads), post_op_(post_op) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return ctx.error(ErrorCode::kInvalidArgument, "Conv needs inputs X and W");
    for (const Tensor* t : {x, w, b}) {
      if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) {
        return ctx.error(ErrorCode::kNotImplemented, "the oneDNN Conv runs float32 on the host");
      }
    }
    const int64_t rank = x->rank();
    if (rank < 3 || rank > 5 || w->rank() != rank) {
      return ctx.error(ErrorCode::kInvalidArgument, "X and W must both have rank 3 to 5, got " +
                                                        shape_to_string(x->shape()) + " and " +
                                                        shape_to_string(w->shape()));
    }
    const int64_t N = x->dim(0), C = x->dim(1), M = w->dim(0), G = group_;
    if (G <= 0 || C % G != 0 || M % G != 0 || w->dim(1) != C / G) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "W " + shape_to_string(w->shape()) + " does not fit X " +
                           shape_to_string(x->shape()) + " with group " + std::to_string(G));
    }
    if (b && (b->rank() != 1 || b->dim(0) != M)) {
      return ctx.error(ErrorCode::kInvalidArgument, "B must have shape [" + std::to_string(M) +
                                                        "], got " + shape_to_string(b->shape()));
    }
    std::vector<int64_t> in, k;
    for (int64_t i = 2; i < rank; ++i) {
      in.push_back(x->dim(i));
      k.push_back(w->dim(i));
    }
    if (!attrs_.kernel.empty() && attrs_.kernel != k) {
      return ctx.error(ErrorCode::kInvalidArgument, "kernel_shape disagrees with W's shape");
    }
    auto win = compute_window(attrs_, in, k);
    if (!win.ok()) return win.status().with_context(ctx.node().describe());
    Shape out = {N, M};
    out.insert(out.end(), win->out.begin(), win->out.end());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    Shape wshape = w->shape();
    if (G > 1) {
      wshape[0] = M / G;
      wshape.insert(wshape.begin(), G);
    }
    const memory::desc xd = dense_desc(x->shape()), wd = dense_desc(wshape), yd = dense_desc(out);
    const memory::desc bd = b ? dense_desc({M}) : memory::desc();
    const std::string what = ctx.node().describe();
    RECUR_ASSIGN_OR_RETURN(
        auto prim, cache_.get(std::make_tuple(x->shape(), w->shape(), b != nullptr), [&]() {
          memory::dims dil;
          for (int64_t d : win->dilations) dil.push_back(d - 1);
          dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::convolution_direct, xd, wd, bd, yd,
                                            win->strides, dil, win->pad_l, win->pad_r);
          // Multiply-adds: every output element sums C/G * prod(kernel) products.
          double macs = static_cast<double>(y->numel()) * static_cast<double>(C / G);
          for (int64_t kd : k) macs *= static_cast<double>(kd);
          dnnl::primitive_attr attr = user_scratchpad_attr();
          if (post_op_) {
            dnnl::post_ops ops;
            ops.append_eltwise(1.0f, *post_op_, 0.0f, 0.0f);
            attr.set_post_ops(ops);
          }
          return make_primitive<dnnl::convolution_forward>(d, attr, threads_for(macs, threads_),
                                                           what);
        }));
    const Bind args[] = {{DNNL_ARG_SRC, xd, x->raw_data()},
                         {DNNL_ARG_WEIGHTS, wd, w->raw_data()},
                         {DNNL_ARG_DST, yd, y->raw_data()},
                         {DNNL_ARG_BIAS, bd, b ? b->raw_data() : nullptr}};
    return execute_primitive(*prim, std::span<const Bind>(args, b ? 4 : 3), scratch_, what);
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
  int threads_;
  std::optional<dnnl::algorithm> post_op_;
  mutable PrimCache<std::tuple<Shape, Shape, bool>> cache_;
  mutable ScratchPool scratch_;
};

Result<std::unique_ptr<Kernel>> create_conv(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(WindowAttrs w, WindowAttrs::read(ctx.node()));
  AttrReader a(ctx.node());
  const int64_t group = a.get_int("group", 1);
  const std::string act = a.get_string(kFusedConvActivation, "");
  RECUR_RETURN_IF_ERROR(a.status());
  std::optional<dnnl::algorithm> post_op;
  if (ctx.node().op_type == kFusedConvOp) {
    if (act != "Relu" && act != "Sigmoid") {
      return ctx.error(ErrorCode::kInvalidModel, "attribute 'activation' is '" + act +
                                                     "'; a FusedConv takes Relu or Sigmoid");
    }
    post_op = act == "Relu" ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_logistic;
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<ConvKernel>(std::move(w), group, options_of(ctx).max_threads, post_op));
}

}  // namespace

void register_conv(KernelRegistry& r) {
  auto claim = [](const Node& n, const Graph& g) { return claim_float32_input(n, g); };
  r.add({.op_type = "Conv", .since = 1, .create = create_conv, .claim = claim});
  r.add({.op_type = kFusedConvOp,
         .domain = kFusedConvDomain,
         .since = 1,
         .create = create_conv,
         .claim = claim});
}

}  // namespace recur::onednn
