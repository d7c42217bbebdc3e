// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool (1-D to 3-D): the global pools and
// the 2-D ones (dilated too) on recur's AVX-512 loops (small_pool.h), their planes split among
// threads past a size, small 1-D max pools on a plain loop, the rest through oneDNN's
// pooling_v2 (dilations, ceil_mode as extra right padding), on channels-last data where the
// plain layout has only oneDNN's generic implementation.
#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/layout.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"
#include "providers/onednn/nn/small_pool.h"
#include "providers/onednn/nn/window.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

// One input shape's pooling: the output shape and the primitive, on channels-last data (with
// reorders from and to the plain layouts) where oneDNN's plain-layout implementation is its
// generic one, which took 20 us for crnn's 2x32x32 MaxPool against about 1 us on nwc.
struct PoolPlan {
  Shape out;
  // A 1-D max pool of at most 64K elements runs on a plain loop instead (run_small): the
  // primitive costs more per call than the work, and a few MiB of code and JIT per process.
  bool small = false;
  int64_t k = 0, stride = 1, dilation = 1, pad = 0;
  // 2-D pools and global pools of small tensors on recur's AVX-512 loops (small_pool.h).
  std::optional<SmallPool2d> small2d;
  bool blocked = false;  // small2d over channel-blocked planes [H, W, 16] (run_blocked_pool2d)
  bool small_global = false;
  // A GlobalAveragePool over empty spatial dimensions: zeros, as the reference provider
  // averages nothing (oneDNN refuses a window of size 0).
  bool empty_average = false;
  memory::desc x, y;      // the plain layouts
  memory::desc src, dst;  // the primitive's
  CachedPrimitive prim;
  std::shared_ptr<CachedPrimitive> to_src, from_dst;  // null where the layouts are the same
};

class PoolKernel final : public Kernel {
 public:
  PoolKernel(PoolKind kind, WindowAttrs attrs, bool count_include_pad, Threads threads,
             std::string what, bool small)
      : kind_(kind),
        attrs_(std::move(attrs)),
        include_pad_(count_include_pad),
        threads_(threads),
        what_(std::move(what)),
        small_(small),
        avx512_(small && avx512::have_avx512()) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "input X is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN kernel runs float32 on the host");
    }
    RECUR_ASSIGN_OR_RETURN(auto plan, cache_.get(x->shape(), [&] { return make_plan(ctx, *x); }));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, plan->out));
    if (y->numel() == 0) return ok_status();
    if (plan->empty_average) {
      std::fill(y->data<float>(), y->data<float>() + y->numel(), 0.0f);
      return ok_status();
    }
    if (plan->small) return run_small(*plan, *x, *y);
    if (plan->small2d || plan->small_global) {
      // The planes split among the threads a lease gives past threads_for's bound; each plane
      // is pooled the same way whatever the split.
      const int64_t planes = x->dim(0) * x->dim(1), in = x->numel() / planes,
                    out = y->numel() / planes;
      // Reading an element costs several multiply-adds' time (threads_for's unit): a plane
      // loop over 2M elements took 1.2 ms on one thread, far past the tens of microseconds
      // below which a team costs more than it saves.
      const Threads want = threads_for(8.0 * static_cast<double>(x->numel()), threads_);
      CoreLease lease;
      if (want.max > 1) lease.acquire(want.max, want.shrink);
      const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), planes);
      const float* xp = x->data<float>();
      float* yp = y->data<float>();
      in_parts(planes, jobs, [&](int64_t p0, int64_t p1) {
        if (plan->blocked) {
          run_blocked_pool2d(*plan->small2d, p1 - p0, xp + p0 * in, yp + p0 * out);
        } else if (plan->small2d) {
          run_small_pool2d(*plan->small2d, p1 - p0, xp + p0 * in, yp + p0 * out);
        } else {
          run_global_pool(kind_ == PoolKind::kGlobalMax, p1 - p0, in, xp + p0 * in, yp + p0);
        }
      });
      return ok_status();
    }
    ScratchPool::Lease src_buf =
        plan->to_src ? buffers_.acquire(plan->src.get_size()) : ScratchPool::Lease();
    ScratchPool::Lease dst_buf =
        plan->from_dst ? buffers_.acquire(plan->dst.get_size()) : ScratchPool::Lease();
    const void* src = plan->to_src ? src_buf.data() : x->raw_data();
    void* dst = plan->from_dst ? dst_buf.data() : y->raw_data();
    if (plan->to_src) {
      RECUR_RETURN_IF_ERROR(execute_primitive(
          *plan->to_src, {{DNNL_ARG_FROM, plan->x, x->raw_data()}, {DNNL_ARG_TO, plan->src, src}},
          scratch_, what_));
    }
    RECUR_RETURN_IF_ERROR(execute_primitive(
        plan->prim, {{DNNL_ARG_SRC, plan->src, src}, {DNNL_ARG_DST, plan->dst, dst}}, scratch_,
        what_));
    if (plan->from_dst) {
      RECUR_RETURN_IF_ERROR(execute_primitive(
          *plan->from_dst, {{DNNL_ARG_FROM, plan->dst, dst}, {DNNL_ARG_TO, plan->y, y->raw_data()}},
          scratch_, what_));
    }
    if (kind_ == PoolKind::kMax || kind_ == PoolKind::kGlobalMax)
      empty_windows_to_minus_inf(*x, *y);
    return ok_status();
  }

 private:
  // The largest of each window's taps inside X, as the reference provider takes it: a NaN is
  // never larger, and a window with no tap (or only NaNs) gives -inf.
  // oneDNN's max pool starts each window at the lowest float and skips NaN (x86's max), so a
  // window of NaN, -inf and padding alone gives -3.4e38, where the reference (and recur's own
  // loops) give -inf. Where X holds no -3.4e38 of its own, every such value in Y is such a
  // window; where it does (a hostile input), Y is left as oneDNN made it. The read of Y costs
  // little beside the pool's read of X, and X is read only where Y has the value.
  static void empty_windows_to_minus_inf(const Tensor& x, Tensor& y) {
    constexpr float kLowest = std::numeric_limits<float>::lowest();
    float* yp = y.data<float>();
    const int64_t n = y.numel();
    if (std::find(yp, yp + n, kLowest) == yp + n) return;
    const float* xp = x.data<float>();
    if (std::find(xp, xp + x.numel(), kLowest) != xp + x.numel()) return;
    std::replace(yp, yp + n, kLowest, -std::numeric_limits<float>::infinity());
  }

  static Status run_small(const PoolPlan& p, const Tensor& x, Tensor& y) {
    const int64_t rows = p.out[0] * p.out[1], To = p.out[2], Ti = x.dim(2);
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = xp + r * Ti;
      for (int64_t t = 0; t < To; ++t) {
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < p.k; ++j) {
          const int64_t i = t * p.stride - p.pad + j * p.dilation;
          if (i >= 0 && i < Ti && xr[i] > best) best = xr[i];
        }
        yp[r * To + t] = best;
      }
    }
    return ok_status();
  }

  Result<PoolPlan> make_plan(const KernelContext& ctx, const Tensor& x) const {
    const int64_t rank = x.rank();
    if (rank < 3 || rank > 5) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "oneDNN pools 1-D to 3-D inputs, got " + shape_to_string(x.shape()));
    }
    std::vector<int64_t> in;
    for (int64_t i = 2; i < rank; ++i) in.push_back(x.dim(i));
    const bool global = kind_ == PoolKind::kGlobalMax || kind_ == PoolKind::kGlobalAverage;
    WindowAttrs a = attrs_;
    std::vector<int64_t> k = global ? in : a.kernel;
    if (global) a = WindowAttrs{};
    if (global && std::find(in.begin(), in.end(), 0) != in.end()) {
      if (kind_ == PoolKind::kGlobalMax)
        return ctx.error(ErrorCode::kInvalidArgument,
                         "cannot take the maximum over empty spatial dimensions");
      PoolPlan plan;
      plan.out = Shape(static_cast<size_t>(rank), 1);
      plan.out[0] = x.dim(0);
      plan.out[1] = x.dim(1);
      plan.empty_average = true;
      return plan;
    }
    if (k.size() != in.size()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "kernel_shape must have " + std::to_string(in.size()) + " values");
    }
    auto win = compute_window(a, in, k);
    if (!win.ok()) return win.status().with_context(what_);
    PoolPlan plan;
    plan.out = {x.dim(0), x.dim(1)};
    plan.out.insert(plan.out.end(), win->out.begin(), win->out.end());
    int64_t out_numel = 1;
    for (int64_t d : plan.out) out_numel *= d;
    if (out_numel == 0) return plan;
    const bool max = kind_ == PoolKind::kMax || kind_ == PoolKind::kGlobalMax;
    if (small_ && max && rank == 3 && x.numel() <= 65536) {
      plan.small = true;
      plan.k = win->kernel[0];
      plan.stride = win->strides[0];
      plan.dilation = win->dilations[0];
      plan.pad = win->pad_l[0];
      return plan;
    }
    // The 2-D and global pools run on recur's own loops, split over planes past threads_for's
    // bound: oneDNN 2.6 pools NCHW on its generic implementation, and channels-last with its
    // reorders each way (a CRNN's 2x2 max pool of [64, 32, 32, 128] at 2 threads, p50: 3.0 ms
    // there, 2.2-2.4 here).
    if (avx512_) {
      if (global) {
        plan.small_global = true;
        return plan;
      }
      // A pool of kernel [kh, kw, 1] over [N, C/16, H, W, 16] pools each channel's plane:
      // the blocked form of a 2-D pool (runtime/graph/blocked.h).
      const bool blocked = rank == 5 && x.dim(4) == avx512::kLanes && win->kernel[2] == 1 &&
                           win->strides[2] == 1 && win->pad_l[2] == 0 && win->pad_r[2] == 0 &&
                           win->dilations[2] == 1;
      if (rank == 4 || blocked) {
        const std::vector<int64_t> model_pads = a.pads;
        const auto pad_end = [&](size_t i) {
          // The model's end pads count toward count_include_pad; auto_pad's are the window's.
          const size_t axes = in.size();
          return model_pads.size() == 2 * axes ? model_pads[axes + i] : win->pad_r[i];
        };
        SmallPool2d p = SmallPool2d::make(max, include_pad_, in[0], in[1], win->out[0], win->out[1],
                                          win->kernel[0], win->kernel[1], win->strides[0],
                                          win->strides[1], win->pad_l[0], win->pad_l[1], pad_end(0),
                                          pad_end(1), win->dilations[0], win->dilations[1]);
        if (blocked || p.row_floats() <= SmallPool2d::kMaxRow) {
          plan.small2d = std::move(p);
          plan.blocked = blocked;
          return plan;
        }
      }
    }
    plan.x = dense_desc(x.shape());
    plan.y = dense_desc(plan.out);
    const auto alg = max            ? dnnl::algorithm::pooling_max
                     : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                    : dnnl::algorithm::pooling_avg_exclude_padding;
    memory::dims dil;
    for (int64_t d : win->dilations) dil.push_back(d - 1);
    auto make = [&](const memory::desc& src, const memory::desc& dst) {
      auto d = [&] {
        return dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst,
                                              win->strides, win->kernel, dil, win->pad_l,
                                              win->pad_r);
      };
      return make_primitive<dnnl::pooling_v2_forward>(
          d, user_scratchpad_attr(), threads_for(static_cast<double>(x.numel()), threads_), what_);
    };
    RECUR_ASSIGN_OR_RETURN(plan.prim, make(plan.x, plan.y));
    plan.src = plan.x;
    plan.dst = plan.y;
    if (!generic_impl(plan.prim.impl)) return plan;
    Result<CachedPrimitive> last = make(channels_last(plan.x), channels_last(plan.y));
    if (!last.ok() || generic_impl(last->impl)) return plan;
    plan.src = channels_last(plan.x);
    plan.dst = channels_last(plan.y);
    plan.prim = std::move(last).value();
    RECUR_ASSIGN_OR_RETURN(plan.to_src, make_reorder(plan.x, plan.src, what_));
    RECUR_ASSIGN_OR_RETURN(plan.from_dst, make_reorder(plan.dst, plan.y, what_));
    return plan;
  }

  PoolKind kind_;
  WindowAttrs attrs_;
  bool include_pad_;
  Threads threads_;
  std::string what_;  // the node, for errors
  bool small_;        // 1-D max pools of small tensors on a plain loop
  bool avx512_;       // and 2-D and global pools on recur's AVX-512 loops
  mutable PrimCache<Shape, PoolPlan> cache_;
  mutable ScratchPool scratch_;
  mutable ScratchPool buffers_;  // X and Y in the primitive's layouts
};

Claim claim_pool(const Node& n, const Graph& g, PoolKind kind) {
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  // A rank known at load outside oneDNN's 1-D to 3-D pooling goes to the reference provider
  // (a GlobalAveragePool of [1, 3], which pools nothing, failed at run time; found by the
  // fuzzer's comparison). An unknown rank is checked at run time.
  if (!n.has_input(0)) return Claim::decline("input X is missing");
  if (const auto& shape = g.value(n.inputs[0]).type.shape;
      shape && (shape->size() < 3 || shape->size() > 5)) {
    return Claim::decline("oneDNN pools 1-D to 3-D inputs, this one has rank " +
                          std::to_string(shape->size()));
  }
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
  // oneDNN refuses a pad as wide as the window, where a window would hold padding only; ONNX
  // Runtime refuses such a model, the reference provider runs it (found by the fuzzer's
  // comparison: a primitive that failed to build at run time).
  if (kind == PoolKind::kMax || kind == PoolKind::kAverage) {
    auto w = WindowAttrs::read(n);
    if (w.ok() && !w->pads.empty() && w->pads.size() == 2 * w->kernel.size()) {
      const size_t rank = w->kernel.size();
      for (size_t i = 0; i < rank; ++i) {
        const int64_t dilation = i < w->dilations.size() ? w->dilations[i] : 1;
        const int64_t span = (w->kernel[i] - 1) * dilation + 1;
        if (w->pads[i] >= span || w->pads[i + rank] >= span) {
          return Claim::decline("a pad as wide as the window (" + std::to_string(w->pads[i]) +
                                ", " + std::to_string(w->pads[i + rank]) + " around " +
                                std::to_string(span) +
                                "): oneDNN needs every window to reach the input");
        }
      }
    }
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
           return std::unique_ptr<Kernel>(
               std::make_unique<PoolKernel>(kind, std::move(w), include, options_of(ctx).team(),
                                            ctx.node().describe(), options_of(ctx).small_cells));
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
