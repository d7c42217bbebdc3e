// Conv (1-D to 3-D, groups, dilations, auto_pad) through oneDNN's convolution, in plain
// layouts (small 1-D ones on recur's own loops): the weights are read where they are, so W may
// also be a graph input. A recur::FusedConv (runtime/graph/fused_conv.h) runs its activation
// as an eltwise post-op. A recur::BlockedConv (runtime/graph/blocked.h) reads and writes
// nChw16c: X and Y as the primitive holds them, with no copy on either side.
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/finite.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/layout.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/common/shape_bucket.h"
#include "providers/onednn/nn/layout_prim.h"
#include "providers/onednn/nn/nn.h"
#include "providers/onednn/nn/small_conv1d.h"
#include "providers/onednn/nn/window.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/graph/blocked.h"
#include "runtime/graph/fused_conv.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

// A first layer's input channels: read plain by a chain in blocks of 16, and never brgconv's.
constexpr int64_t kMaxFirstLayerChannels = 4;

class ConvKernel final : public Kernel {
 public:
  ConvKernel(WindowAttrs attrs, int64_t group, Threads threads,
             std::optional<dnnl::algorithm> post_op, float post_alpha, Tensor constant_w,
             std::string what, bool small, bool winograd, int64_t block, bool buckets)
      : attrs_(std::move(attrs)),
        group_(group),
        threads_(threads),
        post_op_(post_op),
        post_alpha_(post_alpha),
        constant_w_(std::move(constant_w)),
        what_(std::move(what)),
        small_(small && avx512::have_avx512()),
        winograd_(winograd),
        block_(block),
        buckets_(buckets),
        own_(buckets),
        packs_(threads) {}

  Status run(KernelContext& ctx) const override {
    if (!relu_loses_nan() || runs_on_own_loops(ctx)) return compute(ctx).status();
    // X's magnitudes serve Winograd's check of X too (tame), which would read X again.
    const Tensor* x = ctx.input(0);
    const bool plain_x = x && x->dtype() == DType::kFloat32 && x->is_cpu();
    const avx512::Magnitudes m = plain_x ? scan(*x) : avx512::Magnitudes{};
    if (m.finite && constants_finite(ctx)) return compute(ctx, plain_x ? &m : nullptr).status();
    // The same convolution without the activation, then a Relu that keeps each NaN.
    RECUR_ASSIGN_OR_RETURN(Tensor * y, unfused().compute(ctx));
    relu_keeping_nan(y->data<float>(), y->numel());
    return ok_status();
  }

 private:
  // oneDNN 2.6's Relu post-op (slope 0) is max(x, 0), which gives 0 for a NaN: a NaN or an
  // infinity among the inputs (inf - inf is NaN) would vanish from Y, where the reference,
  // ONNX Runtime (measured: Conv+Relu and Conv+BatchNormalization+Relu keep it) and an
  // unfused Relu keep it. LeakyRelu's slope takes a select, which keeps it.
  bool relu_loses_nan() const {
    return post_op_ == dnnl::algorithm::eltwise_relu && post_alpha_ == 0.0f;
  }

  // Whether the plan already made for these inputs' shapes runs on recur's own loops, which
  // apply the Relu themselves and keep NaN: no read of X is needed for them (a depthwise
  // convolution, memory-bound, would pay about as much for it as for itself).
  bool runs_on_own_loops(const KernelContext& ctx) const {
    const Tensor *x = ctx.input(0), *w = ctx.input(1), *b = ctx.input(2);
    if (!x || !w) return false;
    const std::shared_ptr<const ConvPlan> plan =
        plans_.find(std::make_tuple(x->shape(), w->shape(), b ? b->shape() : Shape{-1}));
    return plan && own_loops(*plan);
  }

  // The magnitudes of float32 `t` (avx512::magnitudes), split among the kernel's threads past
  // 1M values. Reading X each run is what keeping the NaN costs: on one thread a Conformer's
  // subsampling convolution at batch 8 (X 64 MB, not in cache) took 45 -> 52 ms.
  avx512::Magnitudes scan(const Tensor& t) const {
    const float* p = t.data<float>();
    const int64_t n = t.numel();
    if (!avx512::have_avx512()) {  // whether finite only: Winograd, which reads the rest, is off
      avx512::Magnitudes m;
      m.finite = all_finite(p, n);
      return m;
    }
    if (n < (int64_t{1} << 20) || threads_.max < 2) return avx512::magnitudes(p, n);
    CoreLease lease;
    lease.acquire(threads_.max, threads_.shrink);
    // Chunks of 1M values summed in order, whatever the threads: the sum decides Winograd
    // (tame), and a deterministic session must decide the same way every run.
    constexpr int64_t kChunk = int64_t{1} << 20;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), chunks);
    std::vector<avx512::Magnitudes> parts(static_cast<size_t>(chunks));
    in_parts(chunks, jobs, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        parts[static_cast<size_t>(c)] =
            avx512::magnitudes(p + c * kChunk, std::min(kChunk, n - c * kChunk));
      }
    });
    avx512::Magnitudes all;
    for (const avx512::Magnitudes& m : parts) {
      all.max = std::max(all.max, m.max);
      all.sum += m.sum;
      all.finite = all.finite && m.finite;
    }
    return all;
  }

  // Whether W and B hold only finite values (a constant W read once).
  bool constants_finite(const KernelContext& ctx) const {
    const auto finite = [this](const Tensor* t) {
      return !t || t->dtype() != DType::kFloat32 || !t->is_cpu() || scan(*t).finite;
    };
    if (!finite(ctx.input(2))) return false;
    const Tensor* w = ctx.input(1);
    if (!constant_w_.defined() || !w || w->raw_data() != constant_w_.raw_data()) return finite(w);
    std::call_once(w_scanned_, [&] { w_finite_ = finite(&constant_w_); });
    return w_finite_;
  }

  // This convolution without its activation, made at the first run that needs it.
  const ConvKernel& unfused() const {
    std::call_once(unfused_made_, [&] {
      unfused_ =
          std::make_unique<ConvKernel>(attrs_, group_, threads_, std::nullopt, 0.0f, constant_w_,
                                       what_, small_, winograd_, block_, buckets_);
    });
    return *unfused_;
  }

  // The convolution into output 0, which it allocates; `known`: X's magnitudes where read.
  Result<Tensor*> compute(KernelContext& ctx, const avx512::Magnitudes* known = nullptr) const {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return ctx.error(ErrorCode::kInvalidArgument, "Conv needs inputs X and W");
    for (const Tensor* t : {x, w, b}) {
      if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) {
        return ctx.error(ErrorCode::kNotImplemented, "the oneDNN Conv runs float32 on the host");
      }
    }
    // Everything that depends only on the shapes is worked out once per shape: a streaming
    // model runs the same shapes every call, where per-run descriptors and checks cost as much
    // as a small convolution.
    const auto key = std::make_tuple(x->shape(), w->shape(), b ? b->shape() : Shape{-1});
    // A blocked X is planned as the plain X it holds (its memory is only read by the
    // primitive, which is told the layout); a BlockedConv may also read plain X.
    const int64_t x_block = block_ && x->rank() == 5 ? x->shape().back() : 0;
    Tensor unblocked;
    if (x_block) {
      // In blocks of 16 as Y, or channels-last ([N, 1, H, W, C]) where Y is.
      const bool fits =
          channels_last(x_block, x->dim(1)) ? x->dim(1) == 1 : x_block == avx512::kLanes;
      if (!fits) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "X " + shape_to_string(x->shape()) + " is neither [N, C/16, H, W, 16] " +
                             "nor channels-last [N, 1, H, W, C] as Y's block " +
                             std::to_string(block_) + " wants");
      }
      Shape plain(x->shape().begin(), x->shape().end() - 1);
      plain[1] *= x_block;
      unblocked = x->reshaped(plain);
      x = &unblocked;
    } else if (block_ && x->rank() != 4) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X " + shape_to_string(x->shape()) + " is neither [N, C, H, W] nor [N, C/" +
                           std::to_string(block_) + ", H, W, " + std::to_string(block_) + "]");
    }
    if (buckets_ && !plans_.find(key)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * ran,
                             run_bucketed(ctx, key, *ctx.input(0), *x, x_block, *w, b));
      if (ran) return ran;
    }
    RECUR_ASSIGN_OR_RETURN(auto plan,
                           plans_.get(key, [&] { return make_plan(ctx, *x, x_block, *w, b); }));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, plan->out));
    RECUR_RETURN_IF_ERROR(execute(*plan, *x, *w, b, *y, known));
    return y;
  }

  using Key = std::tuple<Shape, Shape, Shape>;

  struct Geometry {
    memory::desc x, w, y, b;  // the plain layouts
    memory::dims strides, dilations, pad_l, pad_r;
    double macs = 0;
    std::string_view avoid;  // oneDNN implementations to pass over (make_primitive)
  };
  // A 1-D convolution with constant weights and under threads_for's one-thread bound, on
  // recur's own loops, where oneDNN's call costs more than the convolution (and its primitive
  // a few MiB of code and JIT): over time (small_conv1d.h) where the output has steps enough
  // to fill vectors, else this one, over output channels: each output position's patch
  // (C x k) times W as a [C k][M] matrix (avx512.h), four positions at a time.
  struct SmallConv {
    std::shared_ptr<const avx512::PackedMatrix> w;  // [C k][M], shared by the plans
    int64_t C = 0, k = 0, stride = 1, dilation = 1, pad = 0;
  };
  // A 2-D convolution of few input channels per group, as one 1-D convolution per output row
  // over the rows its kernel rows read (run_small_conv1d_rows): oneDNN ran a CRNN's first
  // convolution (1 -> 32 channels, 3x3, [2, 1, 16, 40]) in NHWC with a reorder back, 41.6 us.
  struct SmallConv2d {
    SmallConv1d rows;  // C = input channels x kernel rows, over the output row
    int64_t C = 0, H = 0, W = 0, OH = 0, kh = 1, sh = 1, dh = 1, pad_t = 0;
  };
  // A 1x1 convolution (stride 1, no padding, one group: MobileNet's pointwise layers, a
  // projection over channels) as one matmul in NCHW, W [M, C] times each image's X [C, S]:
  // oneDNN's convolution wants NHWC and costs a reorder each way, as much as the product (p50,
  // [1, 40, 4, 160] to 240 channels: 117 us as a convolution, 67 as a product).
  struct Pointwise {
    CachedPrimitive prim;
    memory::desc w, x, y;  // [1, M, C], [N, C, S], [N, M, S]
  };
  struct ConvPlan {
    Shape out;
    std::optional<Pointwise> pointwise;
    std::optional<SmallConv1d> direct;
    std::optional<SmallConv2d> direct2d;
    std::optional<DepthwiseConv2d> depthwise2d;
    std::shared_ptr<SmallConv> small;
    Geometry geo;
    LayoutPrim winograd;    // beside `layout`, where Winograd's algorithm takes it
    LayoutPrim layout;      // with a primitive when W is constant and oneDNN has a layout for it
    CachedPrimitive plain;  // otherwise
    bool fixed_io = false;  // a BlockedConv's: X and Y in the layouts geo gives
    // Beside a Winograd primitive, the direct one (layout or plain) is made at the first run
    // whose X Winograd does not take (tame), which most models never have: a model fed
    // sequences or images of varying length makes a plan per length, and each primitive
    // made costs about a run of the convolution. Null where they were made with the plan.
    struct Direct {
      std::mutex mu;
      bool made = false;
      LayoutPrim layout;
      CachedPrimitive plain;
    };
    std::shared_ptr<Direct> deferred;
  };

  // Whether `plan` runs on recur's own loops, which apply the activation themselves.
  static bool own_loops(const ConvPlan& plan) {
    return plan.direct || plan.direct2d || plan.depthwise2d || plan.small;
  }

  // Runs `plan` from X (plain, or the plain view of a blocked X) into Y, its output.
  Status execute(const ConvPlan& plan, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                 const avx512::Magnitudes* known = nullptr) const {
    if (y.numel() == 0) return ok_status();
    if (plan.direct) {
      ScratchPool::Lease lease =
          buffers_.acquire(static_cast<size_t>(plan.direct->scratch_floats()) * sizeof(float));
      run_small_conv1d(*plan.direct, plan.out[0], x.data<float>(), constant_w_.data<float>(),
                       b ? b->data<float>() : nullptr, y.data<float>(),
                       static_cast<float*>(lease.data()));
      return ok_status();
    }
    if (plan.direct2d) return run_small_2d(*plan.direct2d, plan.geo.macs, x, b, y);
    if (plan.depthwise2d) return run_depthwise_2d(*plan.depthwise2d, plan.geo.macs, x, b, y);
    if (plan.pointwise) {
      const Pointwise& p = *plan.pointwise;
      if (b) {
        const int64_t rows = y.dim(0) * y.dim(1), S = y.numel() / std::max<int64_t>(1, rows);
        const float* bp = b->data<float>();
        float* yp = y.data<float>();
        for (int64_t r = 0; r < rows; ++r)
          std::fill(yp + r * S, yp + (r + 1) * S, bp[r % y.dim(1)]);
      }
      return execute_primitive(p.prim,
                               {{DNNL_ARG_SRC, p.w, constant_w_.raw_data()},
                                {DNNL_ARG_WEIGHTS, p.x, x.raw_data()},
                                {DNNL_ARG_DST, p.y, y.raw_data()}},
                               scratch_, what_);
    }
    if (plan.small) return run_small(plan, x, b, y);
    if (plan.winograd.prim.primitive && tame(x, known)) {
      return run_layout_prim(plan.winograd, plan.geo.x, x.raw_data(), plan.geo.y, y.raw_data(),
                             plan.geo.b, b ? b->raw_data() : nullptr, buffers_, scratch_, what_);
    }
    RECUR_ASSIGN_OR_RETURN(auto direct, direct_of(plan));
    const auto [layout, plain] = direct;
    if (layout->prim.primitive) {
      return run_layout_prim(*layout, plan.geo.x, x.raw_data(), plan.geo.y, y.raw_data(),
                             plan.geo.b, b ? b->raw_data() : nullptr, buffers_, scratch_, what_);
    }
    const Geometry& geo = plan.geo;
    const Bind args[] = {{DNNL_ARG_SRC, geo.x, x.raw_data()},
                         {DNNL_ARG_WEIGHTS, geo.w, w.raw_data()},
                         {DNNL_ARG_DST, geo.y, y.raw_data()},
                         {DNNL_ARG_BIAS, geo.b, b ? b->raw_data() : nullptr}};
    return execute_primitive(*plain, std::span<const Bind>(args, b ? 4 : 3), scratch_, what_);
  }

  // The most floats a bucket's run copies (X padded, Y back): each run pays the copies, where
  // a primitive of the size's own costs 0.3 to 0.7 ms once. A Conformer's subsampling
  // convolutions copied 10 MB a run (sub.2, [1, 256, 199, 39]: 1 ms more than its
  // primitive's cost); a DeepSpeech2's (0.25M floats) and an OCR line reader's (at most
  // 0.2M) gain.
  static constexpr int64_t kMaxBucketCopy = int64_t{1} << 19;

  // The shape buckets' run (common/shape_bucket.h) of an input size whose plan is not made:
  // X copied, zero-padded, to its bucket's sizes, the bucket's plan run, and Y cut back to the
  // size's outputs. The zeros past X's end are the padding the convolution reads there, so the
  // outputs kept are the exact size's: each reads X where it is and zeros past it, as the
  // exact size's does. Null where the size is to have its own plan: pads that depend on the
  // size (auto_pad SAME), sizes that are their buckets, sizes ExactPlans gives their own, and
  // sizes whose bucket runs on recur's own loops, which generate no code.
  Result<Tensor*> run_bucketed(KernelContext& ctx, const Key& key, const Tensor& x_raw,
                               const Tensor& x, int64_t x_block, const Tensor& w,
                               const Tensor* b) const {
    if (attrs_.auto_pad != "NOTSET" && attrs_.auto_pad != "VALID") return nullptr;
    const int64_t rank = x.rank();
    if (rank < 3 || rank > 5 || w.rank() != rank || x.numel() == 0) return nullptr;
    Shape xb = x.shape();
    for (int64_t i = 2; i < rank; ++i) xb[i] = bucket_size(xb[i]);
    if (xb == x.shape()) return nullptr;
    const auto spatial = [](const Shape& s) {
      return std::vector<int64_t>(s.begin() + 2, s.end());
    };
    const Shape& ws = w.shape();
    auto win = compute_window(attrs_, spatial(x.shape()), spatial(ws));
    if (!win.ok()) return nullptr;  // the exact plan reports it
    // [N, M, out...] of the exact size, blocked like the bucket's where a BlockedConv's.
    Shape out = {x.dim(0), ws[0]};
    out.insert(out.end(), win->out.begin(), win->out.end());
    if (shape_numel(xb) + shape_numel(out) > kMaxBucketCopy || own_.exact(key)) return nullptr;
    if (block_) out = blocked_shape(out);
    ScratchPool::Lease x_lease =
        buffers_.acquire(static_cast<size_t>(shape_numel(xb)) * sizeof(float));
    Tensor x_pad = Tensor::borrow(x_lease.data(), DType::kFloat32, xb);
    Shape key_x = xb;
    if (x_block) {
      key_x = x_raw.shape();
      for (int64_t i = 2; i < rank; ++i) key_x[static_cast<size_t>(i)] = xb[static_cast<size_t>(i)];
    }
    RECUR_ASSIGN_OR_RETURN(auto plan,
                           plans_.get(Key{key_x, std::get<1>(key), std::get<2>(key)},
                                      [&] { return make_plan(ctx, x_pad, x_block, w, b); }));
    if (own_loops(*plan)) return nullptr;
    if (plan->out.size() != out.size()) return nullptr;
    // The rows the copies move: a blocked tensor's [N, C/16, H, W] positions hold 16 floats.
    const int64_t inner = block_ ? block_ : 1;
    const auto outer = [&](const Shape& s, bool blocked) {
      return blocked ? std::vector<int64_t>(s.begin(), s.end() - 1) : std::vector<int64_t>(s);
    };
    std::vector<int64_t> from = outer(x_raw.shape(), x_block > 0), to = from;
    for (int64_t i = 2; i < rank; ++i) to[static_cast<size_t>(i)] = xb[static_cast<size_t>(i)];
    copy_window(x_raw.data<float>(), from, static_cast<float*>(x_lease.data()), to,
                x_block ? x_block : 1);
    ScratchPool::Lease y_lease =
        buffers_.acquire(static_cast<size_t>(shape_numel(plan->out)) * sizeof(float));
    Tensor y_pad = Tensor::borrow(y_lease.data(), DType::kFloat32, plan->out);
    RECUR_RETURN_IF_ERROR(execute(*plan, x_pad, w, b, y_pad));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    copy_window(y_pad.data<float>(), outer(plan->out, block_ > 0), y->data<float>(),
                outer(out, block_ > 0), block_ ? inner : 1);
    count_shared_plan_run();
    return y;
  }

  // Winograd's algorithm (oneDNN's F(4x4, 3x3) and F(2x2, 3x3)) computes a tile of outputs
  // from transforms of a tile of X: half the multiply-adds of a direct 3x3 convolution or
  // fewer, and at 2 threads 1.9-2.2x faster with the copies to its blocked layout from 32 to
  // 256 channels (p50, [64, 128, 8, 32] to 128 channels 15.6 against 7.1 ms; [1, 128, 8, 32]
  // 0.24 against 0.13), but slower with 16 (a CRNN's [64, 16, 32, 128]: 6.0 against 8.3).
  static constexpr int64_t kMinWinogradChannels = 32;
  // Its rounding error scales with the largest value of each tile rather than with each
  // output's own terms: on random data about 2-4x a direct convolution's (relative to the sum
  // of the output's terms, 2.2e-7 to 6.4e-7 against 1.0e-7 to 1.9e-7), but next to an outlier
  // much more, and a NaN or an infinity in X spreads over the whole tile (a direct convolution
  // keeps it to the outputs whose window holds it). So each run first scans X: Winograd runs
  // where X is finite and its largest magnitude is within kMaxWinogradSpread times its mean
  // magnitude, and the direct primitive otherwise; W, once, likewise. The scan is one read of
  // X: 1.6% of a perf profile of a CRNN at batch 64, whose convolutions took 60%.
  static constexpr double kMaxWinogradSpread = 256.0;

  static bool tame(const Tensor& x, const avx512::Magnitudes* known = nullptr) {
    const int64_t n = x.numel();
    const avx512::Magnitudes m = known ? *known : avx512::magnitudes(x.data<float>(), n);
    return m.finite &&
           static_cast<double>(m.max) * static_cast<double>(n) <= kMaxWinogradSpread * m.sum;
  }

  bool winograd_fits(const Tensor& x, const Tensor& w, const Window& win) const {
    if (!winograd_ || !avx512::have_avx512() || x.rank() != 4 || group_ != 1 ||
        x.dim(1) < kMinWinogradChannels || w.dim(0) < kMinWinogradChannels)
      return false;
    for (size_t i = 0; i < 2; ++i) {
      if (w.dim(static_cast<int64_t>(i) + 2) != 3 || win.strides[i] != 1 || win.dilations[i] != 1)
        return false;
    }
    // The weights' transform mixes each kernel's nine values as X's does a tile's. W is the
    // kernel's constant: scanned once (plans are made under plans_' lock).
    if (!w_tame_) w_tame_ = tame(constant_w_);
    return *w_tame_;
  }

  // The fused activation as recur's own loops write it (post_alpha_ with it).
  SmallConv1d::Post post_kind() const {
    if (!post_op_) return SmallConv1d::Post::kNone;
    if (*post_op_ == dnnl::algorithm::eltwise_logistic) return SmallConv1d::Post::kSigmoid;
    if (*post_op_ == dnnl::algorithm::eltwise_hardswish) return SmallConv1d::Post::kHardSwish;
    return SmallConv1d::Post::kRelu;
  }

  // The 2-D rows loop takes convolutions of up to 3 input and 64 output channels (an image's
  // or a spectrogram's first layer): with 1 input channel it ran 2.3x faster than oneDNN
  // (1 -> 32, 3x3, [2, 1, 16, 40]: 15.8 against 37.1 us), 1.7-2.5x with stride 2, about even
  // from 3 to 16; with 4 -> 128 channels 1.3x slower, and depthwise ones 3.7x slower.
  static constexpr int64_t kMax2dChannels = 3;
  static constexpr int64_t kMax2dOutputs = 64;
  static constexpr int64_t kMaxRowsRead = 256;  // rows one output row reads, on the stack

  // The depthwise loop, its channels split among the threads a lease gives from threads_for's
  // bound (4M multiply-adds), on the job pool (the caller takes part, so a core another
  // process holds costs at worst one thread's time). Each channel is computed the same way
  // whatever the split. At 2 threads, p50: [1, 128, 32, 160] 3x3 (5.9M) 398 -> 283 us,
  // [1, 96, 32, 320] 3x3 (8.8M) 551 -> 363; below the bound the handoff took what it saved
  // ([1, 240, 4, 160] 5x5, 3.8M: 110 against 117).
  Status run_depthwise_2d(const DepthwiseConv2d& d, double macs, const Tensor& x, const Tensor* b,
                          Tensor& y) const {
    const Threads want = threads_for(macs, threads_);
    CoreLease lease;
    if (want.max > 1) lease.acquire(want.max, want.shrink);
    const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), d.C);
    in_parts(d.C, jobs, [&](int64_t c0, int64_t c1) {
      ScratchPool::Lease s =
          buffers_.acquire(static_cast<size_t>(d.scratch_floats()) * sizeof(float));
      run_depthwise_conv2d(d, x.dim(0), x.data<float>(), constant_w_.data<float>(),
                           b ? b->data<float>() : nullptr, y.data<float>(),
                           static_cast<float*>(s.data()), c0, c1);
    });
    return ok_status();
  }

  // The output rows of all images split among the threads a lease gives from threads_for's
  // bound, as the depthwise loop's channels are; each row is computed the same way whatever
  // the split. At 2 threads, p50: a CRNN's first convolution at batch 64 (1 -> 32 channels,
  // 3x3, [64, 1, 32, 128], 75M multiply-adds) 7.5 ms on oneDNN with its copies, 3.8-4.2 here.
  Status run_small_2d(const SmallConv2d& d, double macs, const Tensor& x, const Tensor* b,
                      Tensor& y) const {
    const int64_t N = x.dim(0), M = d.rows.M, OW = d.rows.To, rows_out = N * d.OH;
    const Threads want = threads_for(macs, threads_);
    CoreLease lease;
    if (want.max > 1) lease.acquire(want.max, want.shrink);
    const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), rows_out);
    in_parts(rows_out, jobs, [&](int64_t r0, int64_t r1) {
      ScratchPool::Lease s =
          buffers_.acquire(static_cast<size_t>(d.rows.scratch_floats()) * sizeof(float));
      float* scratch = static_cast<float*>(s.data());
      const float* rows[kMaxRowsRead];
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / d.OH, oy = r % d.OH;
        const float* xn = x.data<float>() + n * d.C * d.H * d.W;
        // Channel (c, ky) of the 1-D convolution: the input row kernel row ky of channel c
        // reads for this output row, or zeros in the padding.
        for (int64_t c = 0; c < d.C; ++c) {
          for (int64_t ky = 0; ky < d.kh; ++ky) {
            const int64_t iy = oy * d.sh + ky * d.dh - d.pad_t;
            rows[c * d.kh + ky] = iy >= 0 && iy < d.H ? xn + (c * d.H + iy) * d.W : nullptr;
          }
        }
        run_small_conv1d_rows(d.rows, rows, constant_w_.data<float>(),
                              b ? b->data<float>() : nullptr,
                              y.data<float>() + n * M * d.OH * OW + oy * OW, scratch);
      }
    });
    return ok_status();
  }

  // The rows loop's plan, where it takes the convolution (kMax2dChannels).
  std::optional<SmallConv2d> small_2d(const Tensor& x, const Tensor& w, const Window& win) const {
    const int64_t C = x.rank() == 4 ? x.dim(1) : 0, M = w.dim(0);
    if (!small_ || x.rank() != 4 || !constant_w_.defined() || constant_w_.shape() != w.shape() ||
        group_ != 1 || C > kMax2dChannels || M > kMax2dOutputs || win.out[1] < 8 ||
        C * w.dim(2) > kMaxRowsRead) {
      return std::nullopt;
    }
    SmallConv2d d;
    d.C = C;
    d.H = x.dim(2);
    d.W = x.dim(3);
    d.OH = win.out[0];
    d.kh = w.dim(2);
    d.sh = win.strides[0];
    d.dh = win.dilations[0];
    d.pad_t = win.pad_l[0];
    SmallConv1d& r = d.rows;
    r.C = C * d.kh;
    r.M = M;
    r.k = w.dim(3);
    r.stride = win.strides[1];
    r.dilation = win.dilations[1];
    r.pad_l = win.pad_l[1];
    r.Ti = d.W;
    r.To = win.out[1];
    r.y_stride = win.out[0] * win.out[1];
    r.post = post_kind();
    r.alpha = post_alpha_;
    return d;
  }

  // The depthwise loop's plan (DepthwiseConv2d), where it takes the convolution: 2-D, one
  // input and one output channel a group, constant W, output rows of half a vector or more,
  // or of two vectors with a horizontal stride, whose phase copies cost more on short rows.
  // p50 against oneDNN's primitive with its reorders, 1 thread: [1, 240, 4, 160] 5x5 104
  // against 193 us, [1, 96, 32, 320] 3x3 564 against 1147 (the same at 2 threads); stride 2:
  // [1, 96, 64, 320] 601 against 1566, but [1, 72, 56, 56] (28 outputs a row) 115 against 105.
  std::optional<DepthwiseConv2d> depthwise_2d(const Tensor& x, const Tensor& w,
                                              const Window& win) const {
    if (x.rank() != 4) return std::nullopt;  // before reading the window's second axis
    const int64_t min_row = win.strides[1] == 1 ? avx512::kLanes / 2 : 2 * avx512::kLanes;
    if (!small_ || !constant_w_.defined() || constant_w_.shape() != w.shape() || group_ < 2 ||
        x.dim(1) != group_ || w.dim(0) != group_ || win.out[1] < min_row ||
        win.strides[1] > DepthwiseConv2d::kMaxStride || w.dim(3) > DepthwiseConv2d::kMaxKernel)
      return std::nullopt;
    DepthwiseConv2d d;
    d.C = group_;
    d.H = x.dim(2);
    d.W = x.dim(3);
    d.OH = win.out[0];
    d.OW = win.out[1];
    d.kh = w.dim(2);
    d.kw = w.dim(3);
    d.sh = win.strides[0];
    d.sw = win.strides[1];
    d.dh = win.dilations[0];
    d.dw = win.dilations[1];
    d.pad_t = win.pad_l[0];
    d.pad_l = win.pad_l[1];
    d.post = post_kind();
    d.alpha = post_alpha_;
    return d;
  }

  Result<ConvPlan> make_plan(const KernelContext& ctx, const Tensor& x, int64_t x_block,
                             const Tensor& w, const Tensor* b) const {
    const int64_t rank = x.rank();
    if (rank < 3 || rank > 5 || w.rank() != rank) {
      return ctx.error(ErrorCode::kInvalidArgument, "X and W must both have rank 3 to 5, got " +
                                                        shape_to_string(x.shape()) + " and " +
                                                        shape_to_string(w.shape()));
    }
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0), G = group_;
    if (G <= 0 || C % G != 0 || M % G != 0 || w.dim(1) != C / G) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "W " + shape_to_string(w.shape()) + " does not fit X " +
                           shape_to_string(x.shape()) + " with group " + std::to_string(G));
    }
    if (b && (b->rank() != 1 || b->dim(0) != M)) {
      return ctx.error(ErrorCode::kInvalidArgument, "B must have shape [" + std::to_string(M) +
                                                        "], got " + shape_to_string(b->shape()));
    }
    std::vector<int64_t> in, k;
    for (int64_t i = 2; i < rank; ++i) {
      in.push_back(x.dim(i));
      k.push_back(w.dim(i));
    }
    if (!attrs_.kernel.empty() && attrs_.kernel != k) {
      return ctx.error(ErrorCode::kInvalidArgument, "kernel_shape disagrees with W's shape");
    }
    auto win = compute_window(attrs_, in, k);
    if (!win.ok()) return win.status().with_context(what_);
    ConvPlan plan;
    plan.out = {N, M};
    plan.out.insert(plan.out.end(), win->out.begin(), win->out.end());
    int64_t out_numel = 1;
    for (int64_t d : plan.out) out_numel *= d;
    if (out_numel == 0) {
      if (block_) plan.out = blocked_shape(plan.out);  // an empty Y is blocked too
      return plan;
    }
    Shape wshape = w.shape();
    if (G > 1) {
      wshape[0] = M / G;
      wshape.insert(wshape.begin(), G);
    }
    Geometry& geo = plan.geo;
    geo.x = dense_desc(x.shape());
    geo.w = dense_desc(wshape);
    geo.y = dense_desc(plan.out);
    geo.b = b ? dense_desc({M}) : memory::desc();
    geo.strides = win->strides;
    for (int64_t d : win->dilations) geo.dilations.push_back(d - 1);
    geo.pad_l = win->pad_l;
    geo.pad_r = win->pad_r;
    // Multiply-adds: every output element sums C/G * prod(kernel) products.
    geo.macs = static_cast<double>(out_numel) * static_cast<double>(C / G);
    for (int64_t kd : k) geo.macs *= static_cast<double>(kd);
    if (block_) return blocked_plan(x, x_block, w, *win, std::move(plan));
    if (std::optional<SmallConv2d> d = small_2d(x, w, *win)) {
      plan.direct2d = std::move(d);
      return plan;
    }
    if (std::optional<DepthwiseConv2d> d = depthwise_2d(x, w, *win)) {
      plan.depthwise2d = std::move(d);
      return plan;
    }
    if (small_1d(x, w, *win, geo.macs, plan)) return plan;
    RECUR_ASSIGN_OR_RETURN(plan.pointwise, pointwise(x, w, b, *win, geo.macs));
    if (plan.pointwise) return plan;
    if (constant_w_.defined() && constant_w_.shape() == w.shape()) {
      RECUR_RETURN_IF_ERROR(make_primitives(winograd_fits(x, w, *win), plan));
      return plan;
    }
    RECUR_ASSIGN_OR_RETURN(plan.plain, make_conv(geo, geo.x, geo.w, geo.y));
    return plan;
  }

  // The primitives of a plan whose W is the constant one: Winograd's where `winograd` (empty
  // where oneDNN has no Winograd implementation for it: its pads, its post-op), and the direct
  // one in oneDNN's layout, or in the plain one where oneDNN's generic implementation is the
  // only one for those descriptors; the direct one deferred where Winograd's was made.
  Status make_primitives(bool winograd, ConvPlan& plan) const {
    if (winograd) {
      RECUR_ASSIGN_OR_RETURN(plan.winograd,
                             layout_prim(plan, dnnl::algorithm::convolution_winograd));
      if (plan.winograd.prim.primitive) {
        plan.winograd.prim.dense_scratch =
            std::min(winograd_tiles_bytes(plan),
                     static_cast<double>(plan.winograd.prim.scratchpad.get_size())) >=
            kDenseScratchBytes;
        plan.deferred = std::make_shared<ConvPlan::Direct>();
        return ok_status();
      }
    }
    return make_direct(plan, plan.layout, plan.plain);
  }

  // A Winograd primitive's scratchpad holds X's and Y's transformed tiles, alpha x alpha
  // values of every channel for each m x m block of output (m = alpha - 2), which its run
  // writes whole (F(2x2, 3x3)'s kernel takes them in blocks, in a smaller scratchpad, hence
  // the smaller of the two): from 2 MiB of them the scratchpad is on huge pages. Its first run
  // faulted them in 4 KiB at a time, on the 2-vCPU EPYC about 12 us a page: at batch 8 an OCR
  // front end's first run took 1.3-1.4x as long for it (ocr 115 against 89 ms). Fewer tiles
  // leave most of the scratchpad, sized for every thread's share, untouched: on huge pages each
  // one touched would be resident whole (ocr at batch 1: peak RSS +3.3 MiB, no faster).
  static constexpr double kDenseScratchBytes = 2.0 * 1024 * 1024;

  static double winograd_tiles_bytes(const ConvPlan& plan) {
    const dnnl_memory_desc_t& w = plan.winograd.weights.data;
    if (w.format_kind != dnnl_format_kind_wino) return 0.0;
    const int64_t alpha = w.format_desc.wino_desc.alpha, m = alpha - 2;
    const memory::dims x = plan.geo.x.dims(), y = plan.geo.y.dims();
    if (m <= 0 || x.size() != 4 || y.size() != 4) return 0.0;
    const double tiles = static_cast<double>(y[0]) * static_cast<double>((y[2] + m - 1) / m) *
                         static_cast<double>((y[3] + m - 1) / m);
    return static_cast<double>(alpha * alpha) * static_cast<double>(x[1] + y[1]) * tiles *
           sizeof(float);
  }

  Result<LayoutPrim> layout_prim(const ConvPlan& plan, dnnl::algorithm alg) const {
    const Geometry& geo = plan.geo;
    return make_layout_prim(
        geo.x, geo.w, geo.y, constant_w_.raw_data(), packs_, what_,
        [&](const memory::desc& x, const memory::desc& w, const memory::desc& y) {
          return make_conv(geo, x, w, y, alg);
        },
        plan.fixed_io);
  }

  Status make_direct(const ConvPlan& plan, LayoutPrim& layout, CachedPrimitive& plain) const {
    RECUR_ASSIGN_OR_RETURN(layout, layout_prim(plan, dnnl::algorithm::convolution_direct));
    if (!layout.prim.primitive) {
      RECUR_ASSIGN_OR_RETURN(plain, make_conv(plan.geo, plan.geo.x, plan.geo.w, plan.geo.y));
    }
    return ok_status();
  }

  // The direct primitives of `plan`, made now where they were deferred.
  Result<std::pair<const LayoutPrim*, const CachedPrimitive*>> direct_of(
      const ConvPlan& plan) const {
    if (!plan.deferred) return std::make_pair(&plan.layout, &plan.plain);
    ConvPlan::Direct& d = *plan.deferred;
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.made) {
      RECUR_RETURN_IF_ERROR(make_direct(plan, d.layout, d.plain));
      d.made = true;
    }
    return std::make_pair(&d.layout, &d.plain);
  }

  // [N, M/16, OH, OW, 16], the blocked form of Y [N, M, OH, OW].
  Shape blocked_shape(Shape out) const {
    out[1] /= block_;
    out.push_back(block_);
    return out;
  }

  // Whether a BlockedConv whose X has block `x_block` (0: plain) in `x_blocks` blocks runs
  // channels-last: where Y's block is not 16 (so all its channels), or X is one block of other
  // than 16 channels. Y [N, 1, H, W, 16] of 16 channels is both forms.
  bool channels_last(int64_t x_block, int64_t x_blocks) const {
    return block_ != avx512::kLanes || (x_block && x_blocks == 1 && x_block != avx512::kLanes);
  }

  // A BlockedConv's plan: X (where blocked) and Y described as nChw16c, or NHWC where the
  // chain runs channels-last (the primitive's own layout, so its layout path copies neither),
  // W in the primitive's layout; only oneDNN's generic implementation where it has no other
  // for these descriptors. A chain's first convolution reads X plain: oneDNN's first-layer
  // kernels take few channels that way (one channel is NHWC as it is).
  Result<ConvPlan> blocked_plan(const Tensor& x, int64_t x_block, const Tensor& w,
                                const Window& win, ConvPlan plan) const {
    Geometry& geo = plan.geo;
    const bool nhwc = channels_last(x_block, x_block ? x.dim(1) / x_block : 0);
    const auto blocked = [nhwc](const Shape& s) {
      return memory::desc(memory::dims(s.begin(), s.end()), memory::data_type::f32,
                          nhwc ? memory::format_tag::nhwc : memory::format_tag::nChw16c);
    };
    if (x_block || (nhwc && x.dim(1) == 1)) geo.x = blocked(x.shape());  // else plain NCHW
    // NHWC from a few channels: brgconv, oneDNN's first choice, took twice the time of its
    // direct jit kernel (1 -> 256, 3x3 stride 2, [8, 1, 400, 80], 2 threads: 3.29 against 1.58
    // ms; 3 -> 64 0.16 / 0.14).
    if (nhwc && x.dim(1) <= kMaxFirstLayerChannels) geo.avoid = "brgconv";
    geo.y = blocked(plan.out);
    plan.out = blocked_shape(plan.out);
    if (!constant_w_.defined() || constant_w_.shape() != w.shape()) {
      RECUR_ASSIGN_OR_RETURN(plan.plain, make_conv(geo, geo.x, geo.w, geo.y));
      return plan;
    }
    plan.fixed_io = true;
    RECUR_RETURN_IF_ERROR(make_primitives(winograd_fits(x, w, win), plan));
    return plan;
  }

  // recur's own 1-D loops (SmallConv1d over time, SmallConv by patches), where they take the
  // convolution: sets plan.direct or plan.small and returns true.
  bool small_1d(const Tensor& x, const Tensor& w, const Window& win, double macs,
                ConvPlan& plan) const {
    if (x.rank() != 3) return false;
    const int64_t C = x.dim(1), M = w.dim(0), G = group_, k0 = w.dim(2);
    // A 1-D depthwise convolution (one input channel a group: a Conformer's convolution
    // module, k of 15 to 31 over hundreds of channels) takes the loop over time at any size:
    // oneDNN 2.6 runs it as a GEMM per group, [4, 512, 400] with k=31 in 13.1 ms against 1.5
    // on the loop.
    const bool depthwise = G > 1 && C == G;
    const bool small = small_ && (macs < 4194304.0 || depthwise) && constant_w_.defined() &&
                       constant_w_.shape() == w.shape();
    const bool by_patch = small && G == 1 && C * k0 * M <= (int64_t{1} << 18);
    if (small) {
      SmallConv1d d;
      d.C = C;
      d.M = M;
      d.G = G;
      d.k = k0;
      d.stride = win.strides[0];
      d.dilation = win.dilations[0];
      d.pad_l = win.pad_l[0];
      d.Ti = x.dim(2);
      d.To = win.out[0];
      d.post = post_kind();
      d.alpha = post_alpha_;
      // In vector multiply-adds (SmallConv1d::cost for the loop over time); the patch loop
      // wastes the lanes past M, and builds each step's patch in scalars, a load and a bounds
      // test an element (counted as two multiply-adds). Without the patch loop (groups), time
      // takes at least half a vector or oneDNN runs it.
      const double over_time = d.cost();
      const double by_patch_cost =
          static_cast<double>(d.To * C * d.k) *
          static_cast<double>((M + avx512::kLanes - 1) / avx512::kLanes + 2);
      if (by_patch ? over_time <= by_patch_cost : d.To >= avx512::kLanes / 2) {
        plan.direct = d;
        return true;
      }
    }
    if (by_patch) {
      auto sc = std::make_shared<SmallConv>();
      // W's packing does not depend on X's length: made at the first plan that wants it (plans
      // are made under plans_' lock), then shared.
      if (!small_w_) {
        small_w_ = std::make_shared<const avx512::PackedMatrix>(avx512::pack_matrix(
            constant_w_.data<float>(), C * k0, M, true, 1.0f, nullptr, 0, 0.0f));
      }
      sc->w = small_w_;
      sc->C = C;
      sc->k = k0;
      sc->stride = win.strides[0];
      sc->dilation = win.dilations[0];
      sc->pad = win.pad_l[0];
      plan.small = std::move(sc);
      return true;
    }
    return false;
  }

  // The matmul of a 1x1 convolution (Pointwise), where the convolution is one.
  Result<std::optional<Pointwise>> pointwise(const Tensor& x, const Tensor& w, const Tensor* b,
                                             const Window& win, double macs) const {
    if (group_ != 1 || !constant_w_.defined() || constant_w_.shape() != w.shape())
      return std::optional<Pointwise>();
    for (size_t i = 0; i < win.out.size(); ++i) {
      if (w.dim(static_cast<int64_t>(i) + 2) != 1 || win.strides[i] != 1 || win.pad_l[i] != 0 ||
          win.pad_r[i] != 0)
        return std::optional<Pointwise>();
    }
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    const int64_t S = x.numel() / std::max<int64_t>(1, N * C);
    Pointwise p;
    p.w = dense_desc({1, M, C});
    p.x = dense_desc({N, C, S});
    p.y = dense_desc({N, M, S});
    // The bias written into Y first and added by a sum post-op: as the matmul's own bias,
    // [1, M, 1] has only oneDNN's generic implementation, and as a binary post-op it cost
    // 40 us of the 100 ([1, 40, 4, 160] to 240 channels).
    dnnl::primitive_attr attr = user_scratchpad_attr();
    dnnl::post_ops ops;
    if (b) ops.append_sum(1.0f);
    if (post_op_) ops.append_eltwise(1.0f, *post_op_, post_alpha_, 0.0f);
    attr.set_post_ops(ops);
    auto d = [&] { return dnnl::matmul::desc(p.w, p.x, p.y); };
    Result<CachedPrimitive> prim =
        make_primitive<dnnl::matmul>(d, attr, threads_for(macs, threads_), what_);
    // Where oneDNN has only its generic matmul for this, the convolution keeps its own path.
    if (!prim.ok() || generic_impl(prim->impl)) return std::optional<Pointwise>();
    p.prim = std::move(prim).value();
    return std::optional<Pointwise>(std::move(p));
  }

  Result<CachedPrimitive> make_conv(
      const Geometry& g, const memory::desc& x, const memory::desc& w, const memory::desc& y,
      dnnl::algorithm alg = dnnl::algorithm::convolution_direct) const {
    auto d = [&] {
      return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, x, w, g.b, y,
                                             g.strides, g.dilations, g.pad_l, g.pad_r);
    };
    dnnl::primitive_attr attr = user_scratchpad_attr();
    if (post_op_) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, *post_op_, post_alpha_, 0.0f);
      attr.set_post_ops(ops);
    }
    return make_primitive<dnnl::convolution_forward>(d, attr, threads_for(g.macs, threads_), what_,
                                                     g.avoid);
  }

  Status run_small(const ConvPlan& plan, const Tensor& x, const Tensor* b, Tensor& y) const {
    const SmallConv& sc = *plan.small;
    const int64_t N = plan.out[0], M = plan.out[1], To = plan.out[2], Ti = x.dim(2);
    const int64_t K = sc.C * sc.k, Np = sc.w->Np;
    constexpr int kRows = avx512::kRowBlock;
    ScratchPool::Lease lease = buffers_.acquire(
        static_cast<size_t>(Np + kRows * Np + kRows * ((K + 15) / 16 * 16)) * sizeof(float));
    float* bias = static_cast<float*>(lease.data());
    float* res = bias + Np;
    float* patch = res + kRows * Np;
    const int64_t Kp = (K + 15) / 16 * 16;
    std::fill(bias, bias + Np, 0.0f);
    if (b) std::copy(b->data<float>(), b->data<float>() + M, bias);
    const float* init[kRows] = {bias, bias, bias, bias};
    const float* in[kRows];
    float* out[kRows];
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    for (int64_t n = 0; n < N; ++n) {
      const float* xn = xp + n * sc.C * Ti;
      for (int64_t t0 = 0; t0 < To; t0 += kRows) {
        const int nr = static_cast<int>(std::min<int64_t>(kRows, To - t0));
        for (int q = 0; q < nr; ++q) {
          float* pq = patch + q * Kp;
          const int64_t start = (t0 + q) * sc.stride - sc.pad;
          for (int64_t c = 0; c < sc.C; ++c) {
            for (int64_t j = 0; j < sc.k; ++j) {
              const int64_t t = start + j * sc.dilation;
              pq[c * sc.k + j] = t >= 0 && t < Ti ? xn[c * Ti + t] : 0.0f;
            }
          }
          in[q] = pq;
          out[q] = res + q * Np;
        }
        avx512::multiply_rows(nr, init, in, K, static_cast<const float*>(sc.w->m->data), Np, out);
        for (int q = 0; q < nr; ++q) {
          if (post_op_ == dnnl::algorithm::eltwise_relu && post_alpha_ != 0.0f) {
            for (int64_t m = 0; m < M; ++m)
              out[q][m] = out[q][m] < 0.0f ? post_alpha_ * out[q][m] : out[q][m];
          } else if (post_op_) {
            avx512::unary(*post_op_ == dnnl::algorithm::eltwise_relu ? avx512::Unary::kRelu
                          : *post_op_ == dnnl::algorithm::eltwise_hardswish
                              ? avx512::Unary::kHardSwish
                              : avx512::Unary::kSigmoid,
                          out[q], M, out[q]);
          }
          for (int64_t m = 0; m < M; ++m) yp[(n * M + m) * To + t0 + q] = out[q][m];
        }
      }
    }
    return ok_status();
  }

  WindowAttrs attrs_;
  int64_t group_;
  Threads threads_;
  std::optional<dnnl::algorithm> post_op_;
  float post_alpha_;  // eltwise_relu's negative slope: LeakyRelu's alpha, 0 for Relu
  // W when it is a constant of the graph (at compile): the layout path reorders it once.
  Tensor constant_w_;
  std::string what_;  // the node, for errors
  bool small_;        // 1-D convolutions may take recur's own loop
  bool winograd_;     // onednn.winograd
  int64_t block_;     // a BlockedConv's Y's channel block (16, or M channels-last); 0 for a Conv
  bool buckets_;      // sizes may share their bucket's plan (not for a static X, nor deterministic)
  mutable PrimCache<Key, ConvPlan> plans_;
  mutable ExactPlans<Key> own_;  // which sizes get a plan of their own
  mutable WeightPacks packs_;    // constant W in the layouts of the plans' primitives
  mutable std::shared_ptr<const avx512::PackedMatrix> small_w_;  // W for SmallConv plans
  mutable std::optional<bool> w_tame_;  // whether W suits Winograd (winograd_fits)
  mutable std::once_flag w_scanned_;
  mutable bool w_finite_ = true;  // whether constant W is free of NaN and infinities
  mutable std::once_flag unfused_made_;
  mutable std::unique_ptr<ConvKernel> unfused_;  // without the Relu (relu_loses_nan)
  mutable ScratchPool scratch_;
  mutable ScratchPool buffers_;  // X and Y in the primitive's layouts
};

// Y in blocks of 16 (the AVX-512 layout, the block the provider asks for) or channels-last
// (one block of all M channels), 2-D, one group, and W a constant of whole blocks of output
// channels: the blocking pass makes no other.
Claim claim_blocked_conv(const Node& n, const Graph& g) {
  if (!avx512::have_avx512()) return Claim::decline(cpu::why_not(cpu::Feature::kAvx512));
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  if (const Attribute* group = n.attr("group"); group && group->i != 1)
    return Claim::decline("a grouped BlockedConv");
  const Tensor* w = n.has_input(1) ? g.constant(n.inputs[1]) : nullptr;
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4 || w->dim(0) % avx512::kLanes != 0)
    return Claim::decline("W is not a float32 constant [M, C, kH, kW] of whole blocks");
  const Attribute* block = n.attr(kBlockAttr);
  if (!block || (block->i != avx512::kLanes && block->i != w->dim(0)))
    return Claim::decline("the oneDNN BlockedConv takes blocks of 16 channels or all of them");
  return Claim::accept();
}

Result<std::unique_ptr<Kernel>> create_conv(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(WindowAttrs w, WindowAttrs::read(ctx.node()));
  AttrReader a(ctx.node());
  const int64_t group = a.get_int("group", 1);
  const std::string act = a.get_string(kFusedConvActivation, "");
  const float leaky_alpha = a.get_float(kFusedConvAlpha, 0.01f);
  const bool blocked = ctx.node().op_type == kBlockedConvOp;
  const int64_t block = blocked ? a.get_int(kBlockAttr, 0) : 0;
  RECUR_RETURN_IF_ERROR(a.status());
  const Tensor* constant_w = ctx.constant_input(1);
  if (blocked && block != avx512::kLanes &&
      (!constant_w || constant_w->rank() < 1 || block != constant_w->dim(0))) {
    return ctx.error(ErrorCode::kInvalidModel, "the oneDNN BlockedConv takes blocks of " +
                                                   std::to_string(avx512::kLanes) +
                                                   " channels or of all its output channels");
  }
  std::optional<dnnl::algorithm> post_op;
  float post_alpha = 0.0f;
  if (ctx.node().op_type == kFusedConvOp || (blocked && !act.empty())) {
    if (act != "Relu" && act != "LeakyRelu" && act != "Sigmoid" && act != "HardSwish") {
      return ctx.error(ErrorCode::kInvalidModel,
                       "attribute 'activation' is '" + act +
                           "'; a FusedConv takes Relu, LeakyRelu, Sigmoid or HardSwish");
    }
    post_op = act == "Sigmoid"     ? dnnl::algorithm::eltwise_logistic
              : act == "HardSwish" ? dnnl::algorithm::eltwise_hardswish
                                   : dnnl::algorithm::eltwise_relu;
    if (act == "LeakyRelu") post_alpha = leaky_alpha;
  }
  Tensor w_value = constant_w && constant_w->dtype() == DType::kFloat32 && constant_w->is_cpu()
                       ? *constant_w
                       : Tensor();
  return std::unique_ptr<Kernel>(std::make_unique<ConvKernel>(
      std::move(w), group, options_of(ctx).team(), post_op, post_alpha, std::move(w_value),
      ctx.node().describe(), options_of(ctx).small_cells, options_of(ctx).winograd, block,
      !ctx.input_type(0).is_static() && !options_of(ctx).deterministic));
}

}  // namespace

namespace {

// oneDNN 2.6 runs a convolution on nChw16c with its direct jit kernel and on NHWC with brgconv,
// which wins on strided convolutions over many channels. At 2 threads (1 thread), p50, 3x3 stride
// 2, nChw16c against NHWC: [8, 256, 199, 39] to 256 channels (a Conformer's subsampling) 64.3
// against 46.2 ms (124 / 92), 192 channels over [8, 192, 100, 40] 16.1 / 13.3, 128 over [8,
// 128, 199, 39] 13.8 / 11.8, 64 7.1 / 6.6; level from 32 to 64 channels and at stride 1 (where
// Winograd's nChw16c kernel takes a 3x3 anyway), a 1x1 slower (256 channels, one thread: 11.8
// against 15.9), and a first layer from one channel costs more to NHWC even on the direct
// kernel (1 -> 256, [8, 1, 400, 80], in the chain at one thread: 2.6 against 3.95 ms), which
// the chain's later convolutions must make up.
constexpr int64_t kMinChannelsLastChannels = 128;

// Whether oneDNN has more than its generic implementation for `conv` from and to NHWC, planned
// for one image of X's spatial size where the graph knows it (else 64 x 64).
bool fast_nhwc(const Node& conv, const Graph& g, const Tensor& w) {
  Result<WindowAttrs> attrs = WindowAttrs::read(conv);
  if (!attrs.ok()) return false;
  const TypeInfo& x = g.value(conv.inputs[0]).type;
  std::vector<int64_t> in = {64, 64};
  for (size_t i = 0; i < 2; ++i) {
    if (x.shape && x.shape->size() == 4 && (*x.shape)[i + 2].is_fixed())
      in[i] = (*x.shape)[i + 2].value;
  }
  Result<Window> win = compute_window(*attrs, in, {w.dim(2), w.dim(3)});
  if (!win.ok() || win->out[0] < 1 || win->out[1] < 1) return false;
  const auto nhwc = [](memory::dims d) {
    return memory::desc(d, memory::data_type::f32, memory::format_tag::nhwc);
  };
  memory::dims dil;
  for (int64_t d : win->dilations) dil.push_back(d - 1);
  bool fast = false;
  Status made = dnnl_try(conv, [&] {
    dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
            nhwc({1, w.dim(1), in[0], in[1]}),
            memory::desc({w.dim(0), w.dim(1), w.dim(2), w.dim(3)}, memory::data_type::f32,
                         memory::format_tag::any),
            memory::desc({w.dim(0)}, memory::data_type::f32, memory::format_tag::x),
            nhwc({1, w.dim(0), win->out[0], win->out[1]}), win->strides, dil, win->pad_l,
            win->pad_r),
        cpu_engine());
    fast = !generic_impl(pd.impl_info_str());
  });
  return made.ok() && fast;
}

}  // namespace

bool chain_has_pool(const std::vector<const Node*>& chain) {
  return std::any_of(chain.begin(), chain.end(), [](const Node* n) {
    return n->op_type == "MaxPool" || n->op_type == "AveragePool" ||
           n->op_type == "GlobalAveragePool";
  });
}

bool chain_runs_channels_last(const std::vector<const Node*>& chain, const Graph& g) {
  if (chain_has_pool(chain)) return false;
  int strided = 0;
  for (const Node* n : chain) {
    if (n->op_type != "Conv" && n->op_type != kFusedConvOp) continue;
    const Tensor* w = n->has_input(1) ? g.constant(n->inputs[1]) : nullptr;
    if (!w || w->rank() != 4) return false;
    if (w->dim(1) <= kMaxFirstLayerChannels) continue;  // a first layer, read plain otherwise
    const Attribute* s = n->attr("strides");
    const Attribute* d = n->attr("dilations");
    const bool strides =
        s && std::any_of(s->ints.begin(), s->ints.end(), [](int64_t v) { return v > 1; });
    const bool dilated =
        d && std::any_of(d->ints.begin(), d->ints.end(), [](int64_t v) { return v != 1; });
    if (!strides || dilated || w->dim(1) < kMinChannelsLastChannels || w->dim(2) * w->dim(3) < 2 ||
        !fast_nhwc(*n, g, *w))
      return false;
    ++strided;
  }
  return strided > 0;
}

void register_conv(KernelRegistry& r) {
  auto claim = [](const Node& n, const Graph& g) { return claim_float32_input(n, g); };
  r.add({.op_type = "Conv", .since = 1, .create = create_conv, .claim = claim});
  r.add({.op_type = kFusedConvOp,
         .domain = kFusedConvDomain,
         .since = 1,
         .create = create_conv,
         .claim = claim});
  r.add({.op_type = kBlockedConvOp,
         .domain = kBlockedDomain,
         .since = 1,
         .create = create_conv,
         .claim = claim_blocked_conv});
}

}  // namespace recur::onednn
