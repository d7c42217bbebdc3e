// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool (1-D to 3-D) through oneDNN's
// pooling_v2 (dilations, ceil_mode as extra right padding).
#include <tuple>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"
#include "providers/onednn/nn/window.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

class PoolKernel final : public Kernel {
 public:
  PoolKernel(PoolKind kind, WindowAttrs attrs, bool count_include_pad, int threads)
      : kind_(kind), attrs_(std::move(attrs)), include_pad_(count_include_pad), threads_(threads) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "input X is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN kernel runs float32 on the host");
    }
    const int64_t rank = x->rank();
    if (rank < 3 || rank > 5) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "oneDNN pools 1-D to 3-D inputs, got " + shape_to_string(x->shape()));
    }
    std::vector<int64_t> in;
    for (int64_t i = 2; i < rank; ++i) in.push_back(x->dim(i));
    const bool global = kind_ == PoolKind::kGlobalMax || kind_ == PoolKind::kGlobalAverage;
    WindowAttrs a = attrs_;
    std::vector<int64_t> k = global ? in : a.kernel;
    if (global) a = WindowAttrs{};
    if (k.size() != in.size()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "kernel_shape must have " + std::to_string(in.size()) + " values");
    }
    auto win = compute_window(a, in, k);
    if (!win.ok()) return win.status().with_context(ctx.node().describe());
    Shape out = {x->dim(0), x->dim(1)};
    out.insert(out.end(), win->out.begin(), win->out.end());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    const memory::desc xd = dense_desc(x->shape()), yd = dense_desc(out);
    const std::string what = ctx.node().describe();
    RECUR_ASSIGN_OR_RETURN(auto prim, cache_.get(x->shape(), [&]() {
      const bool max = kind_ == PoolKind::kMax || kind_ == PoolKind::kGlobalMax;
      const auto alg = max            ? dnnl::algorithm::pooling_max
                       : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                      : dnnl::algorithm::pooling_avg_exclude_padding;
      memory::dims dil;
      for (int64_t d : win->dilations) dil.push_back(d - 1);
      dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, xd, yd,
                                       win->strides, win->kernel, dil, win->pad_l, win->pad_r);
      return make_primitive<dnnl::pooling_v2_forward>(
          d, user_scratchpad_attr(), threads_for(static_cast<double>(x->numel()), threads_), what);
    }));
    return execute_primitive(*prim,
                             {{DNNL_ARG_SRC, xd, x->raw_data()}, {DNNL_ARG_DST, yd, y->raw_data()}},
                             scratch_, what);
  }

 private:
  PoolKind kind_;
  WindowAttrs attrs_;
  bool include_pad_;
  int threads_;
  mutable PrimCache<Shape> cache_;
  mutable ScratchPool scratch_;
};

Claim claim_pool(const Node& n, const Graph& g, PoolKind kind) {
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  if (kind == PoolKind::kMax && n.has_output(1)) {
    return Claim::decline("MaxPool's Indices output has no oneDNN equivalent");
  }
  AttrReader a(n);
  const bool ceil = a.get_int("ceil_mode", 0) != 0;
  const bool include = a.get_int("count_include_pad", 0) != 0;
  if (kind == PoolKind::kAverage && ceil && include) {
    return Claim::decline(
        "AveragePool with ceil_mode and count_include_pad: oneDNN would count the extra "
        "ceil_mode cells as padding");
  }
  if (kind == PoolKind::kAverage && a.has("dilations")) {
    for (int64_t d : a.get_ints("dilations"))
      if (d != 1) return Claim::decline("dilated AveragePool");
  }
  return Claim::accept();
}

void add_pool(KernelRegistry& r, const char* name, PoolKind kind) {
  r.add({.op_type = name,
         .since = 1,
         .create = [kind](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           WindowAttrs w;
           bool include = false;
           if (kind == PoolKind::kMax || kind == PoolKind::kAverage) {
             RECUR_ASSIGN_OR_RETURN(w, WindowAttrs::read(ctx.node()));
             if (w.kernel.empty()) {
               return ctx.error(ErrorCode::kInvalidModel, "kernel_shape is required");
             }
             AttrReader a(ctx.node());
             include = a.get_int("count_include_pad", 0) != 0;
             RECUR_RETURN_IF_ERROR(a.status());
           }
           return std::unique_ptr<Kernel>(std::make_unique<PoolKernel>(
               kind, std::move(w), include, options_of(ctx).max_threads));
         },
         .claim = [kind](const Node& n, const Graph& g) { return claim_pool(n, g, kind); }});
}

}  // namespace

void register_pooling(KernelRegistry& r) {
  add_pool(r, "MaxPool", PoolKind::kMax);
  add_pool(r, "AveragePool", PoolKind::kAverage);
  add_pool(r, "GlobalMaxPool", PoolKind::kGlobalMax);
  add_pool(r, "GlobalAveragePool", PoolKind::kGlobalAverage);
}

}  // namespace recur::onednn
