// The parts of the small-cell RNN kernels that every cell shares (small_cell.h).
#include "providers/onednn/rnn/small_cell.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"
#include "runtime/core/code_layout.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn {

namespace small {

RECUR_LOAD_PATH std::unique_ptr<AlignedBuffer> zeros(int64_t n) {
  auto buf = std::make_unique<AlignedBuffer>(static_cast<size_t>(n) * sizeof(float));
  std::fill(static_cast<float*>(buf->data), static_cast<float*>(buf->data) + n, 0.0f);
  return buf;
}

RECUR_LOAD_PATH void WeightShapes::keep(const Tensor& w_in, const Tensor& r_in, const Tensor* b_in,
                                        const Tensor* p_in) {
  w = Tensor::borrow(nullptr, DType::kFloat32, w_in.shape());
  r = Tensor::borrow(nullptr, DType::kFloat32, r_in.shape());
  if (b_in) b = Tensor::borrow(nullptr, DType::kFloat32, b_in->shape());
  if (p_in) p = Tensor::borrow(nullptr, DType::kFloat32, p_in->shape());
}

Status begin_run(KernelContext& ctx, const Node& node, const RnnSpec& spec,
                 const WeightShapes& shapes, int64_t I, int64_t H, Io& io) {
  const Tensor* x = ctx.input(kRnnX);
  const Tensor* seq = ctx.input(kRnnSeqLens);
  const Tensor* h0 = ctx.input(kRnnInitialH);
  const Tensor* c0 = ctx.input(kRnnInitialC);
  RECUR_ASSIGN_OR_RETURN(RnnDims dims,
                         check_rnn_inputs(node, spec, x, &shapes.w, &shapes.r,
                                          shapes.b.defined() ? &shapes.b : nullptr, seq, h0, c0,
                                          shapes.p.defined() ? &shapes.p : nullptr));
  for (const Tensor* t : {x, h0, c0}) {
    if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu()))
      return ctx.error(ErrorCode::kNotImplemented,
                       "X, initial_h and initial_c must be float32 on the host");
  }
  if (seq && !seq->is_cpu())
    return ctx.error(ErrorCode::kInvalidArgument, "sequence_lens must be on the host");
  io.T = dims.seq_length;
  io.N = dims.batch;
  io.I = I;
  io.H = H;
  io.D = spec.num_directions();
  io.l0 = io.x_l0 = spec.layout == 0;
  io.x = x->data<float>();
  io.h0 = h0 ? h0->data<float>() : nullptr;
  io.c0 = c0 ? c0->data<float>() : nullptr;
  io.lens = seq ? seq->data<int32_t>() : nullptr;
  RECUR_RETURN_IF_ERROR(io.allocate_outputs(ctx, spec.cell == RnnCell::kLstm));
  bool full = true;
  for (int64_t n = 0; n < io.N; ++n) full = full && io.len(n) == io.T;
  if (!full) std::fill(io.y, io.y + io.T * io.D * io.N * io.H, 0.0f);
  return ok_status();
}

RECUR_LOAD_PATH void SmallRnnKernel::release_bias_and_peepholes(const CellWeights& cw) {
  if (cw.b) cw.release(kRnnB);
  if (cw.p) cw.release(kRnnP);
}

RECUR_LOAD_PATH std::vector<OneProductWeights> SmallRnnKernel::pack_one_products(
    const CellWeights& cw, int64_t G, int64_t Gp) const {
  const std::vector<int64_t> same = column_sources(Gp, G);
  std::vector<OneProductWeights> dirs(static_cast<size_t>(spec_.num_directions()));
  const bool last_w = cw.dies_on_release(kRnnW);
  for (size_t d = 0; d < dirs.size(); ++d) {
    dirs[d].w = pack_columns(cw.w->data<float>() + static_cast<int64_t>(d) * G * I_, I_, same, I_,
                             1, last_w);
  }
  cw.release(kRnnW);
  const bool last_r = cw.dies_on_release(kRnnR);
  for (size_t d = 0; d < dirs.size(); ++d) {
    OneProductWeights& p = dirs[d];
    p.r = pack_columns(cw.r->data<float>() + static_cast<int64_t>(d) * G * H_, H_, same, H_, 1,
                       last_r);
    p.bias = zeros(Gp);
    float* bias = static_cast<float*>(p.bias->data);
    if (cw.b) {
      const float* bd = cw.b->data<float>() + static_cast<int64_t>(d) * 2 * G;
      for (int64_t c = 0; c < G; ++c) bias[c] = bd[c] + bd[G + c];
    }
  }
  cw.release(kRnnR);
  return dirs;
}

RECUR_LOAD_PATH std::string SmallRnnKernel::note(const char* cell, int64_t G) const {
  const std::string math = primitive_math_declined(node_, spec_);
  return std::string("recur's small-cell ") + cell + " (" + small_cells_isa() +
         "), not a oneDNN primitive: W and R packed at load, " + std::to_string(G * (I_ + H_)) +
         " multiply-adds a row-step" +
         (math.empty() ? " (oneDNN above " + std::to_string(kSmallCellMaxMacs) + ")"
                       : ", every run: " + math);
}

void SmallRnnKernel::load_states(const Io& io, const Job& j, float* hs, float* cs) const {
  const size_t bytes = static_cast<size_t>(H_) * sizeof(float);
  for (int64_t q = 0; q < j.rows; ++q) {
    const int64_t so = io.s_off(j.d, j.row(io, q));
    float* h = hs + q * H_;
    if (io.h0)
      std::memcpy(h, io.h0 + so, bytes);
    else
      std::fill(h, h + H_, 0.0f);
    if (!cs) continue;
    float* c = cs + q * H_;
    if (io.c0)
      std::memcpy(c, io.c0 + so, bytes);
    else
      std::fill(c, c + H_, 0.0f);
  }
}

void SmallRnnKernel::store_states(const Io& io, const Job& j, const float* hs,
                                  const float* cs) const {
  for (int64_t q = 0; q < j.rows; ++q) {
    const int64_t n = j.row(io, q);
    const int64_t so = io.s_off(j.d, n);
    const bool empty = io.len(n) == 0;
    for (auto [out, src] :
         {std::pair{io.yh, hs + q * H_}, std::pair{io.yc, cs ? cs + q * H_ : nullptr}}) {
      if (!out || !src) continue;
      if (empty)
        std::fill(out + so, out + so + H_, 0.0f);
      else
        std::memcpy(out + so, src, static_cast<size_t>(H_) * sizeof(float));
    }
  }
}

Status SmallRnnKernel::run(KernelContext& ctx) const {
  Io io;
  RECUR_RETURN_IF_ERROR(begin_run(ctx, node_, spec_, shapes_, I_, H_, io));
  if (io.N == 0) return ok_status();

  // Jobs: each direction, and with threads to spare and enough work, interleaved slices of the
  // rows (sorted by length, so that the slices' steps match).
  const int64_t macs = io.D * io.T * io.N * spec_.num_gates() * H_ * (I_ + H_);
  const int threads = threads_for(static_cast<double>(macs), max_threads_);
  const int64_t slices = std::clamp<int64_t>(threads / io.D, 1, io.N);
  const int64_t njobs = std::min<int64_t>(io.D * slices, static_cast<int64_t>(kMaxJobs));
  const int64_t per_dir = njobs / io.D;
  const size_t order_floats = static_cast<size_t>(round_up(io.N * 2, kLanes));
  const size_t job_size =
      static_cast<size_t>(round_up(job_floats((io.N + per_dir - 1) / per_dir), kLanes));
  ScratchPool::Lease lease =
      scratch_.acquire((order_floats + static_cast<size_t>(njobs) * job_size) * sizeof(float));
  auto* order = reinterpret_cast<int64_t*>(lease.data());
  for (int64_t n = 0; n < io.N; ++n) order[n] = n;
  // Longest first, ties in row order; std::sort, unlike stable_sort, takes no buffer.
  if (io.lens)
    std::sort(order, order + io.N, [&](int64_t a, int64_t b) {
      return io.lens[a] > io.lens[b] || (io.lens[a] == io.lens[b] && a < b);
    });
  io.order = order;
  float* base = static_cast<float*>(lease.data()) + order_floats;
  std::array<Status, kMaxJobs> st;
  auto one = [&](size_t i) {
    Job j;
    j.d = static_cast<int>(static_cast<int64_t>(i) / per_dir);
    j.first = static_cast<int64_t>(i) % per_dir;
    j.stride = per_dir;
    j.rows = (io.N - j.first + per_dir - 1) / per_dir;
    st[i] = run_job(ctx, io, j, base + i * job_size);
  };
  if (njobs > 1 && threads > 1) {
    // One pointer of capture: the std::function holds it without allocating.
    run_jobs(static_cast<size_t>(njobs), threads - 1, [f = &one](size_t i) { (*f)(i); });
  } else {
    for (size_t i = 0; i < static_cast<size_t>(njobs); ++i) one(i);
  }
  for (size_t i = 0; i < static_cast<size_t>(njobs); ++i) RECUR_RETURN_IF_ERROR(st[i]);
  return ok_status();
}

}  // namespace small

RECUR_LOAD_PATH bool general_cell_math(const RnnSpec& spec) {
  if (spec.clip) return true;
  if (spec.cell != RnnCell::kRnn) return !spec.default_activations();
  using Kind = RnnActivation::Kind;
  for (const RnnActivation& a : spec.activations)
    if (a.kind != Kind::kTanh && a.kind != Kind::kRelu && a.kind != Kind::kSigmoid) return true;
  return false;
}

RECUR_LOAD_PATH std::string small_kernel_declined(const Node& node, const Graph& graph,
                                                  const RnnSpec& spec) {
  // AVX-512, or AVX2 with FMA (avx2_rows.h, small_cell_avx2.cc).
  if (!cpu::has(cpu::Feature::kAvx2)) return cpu::why_not(cpu::Feature::kAvx2);
  auto constant = [&](size_t i) {
    return node.has_input(i) ? graph.constant(node.inputs[i]) : nullptr;
  };
  const Tensor* w = constant(kRnnW);
  const Tensor* r = constant(kRnnR);
  if (!w || !r || (node.has_input(kRnnB) && !constant(kRnnB)) ||
      (node.has_input(kRnnP) && !constant(kRnnP)))
    return "weights are graph inputs";
  for (size_t i : {kRnnW, kRnnR, kRnnB, kRnnP}) {
    const Tensor* t = constant(i);
    if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) return "weights not float32";
  }
  if (w->rank() != 3 || r->rank() != 3) return "W or R is not rank 3";
  if (w->dim(2) <= 0 || r->dim(2) <= 0) return "an input or hidden size of 0";
  return "";
}

RECUR_LOAD_PATH std::string small_rnn_declined(const CompileContext& ctx, const RnnSpec& spec,
                                               const OnednnOptions& o, bool mid_sized,
                                               bool any_size) {
  if (!o.small_cells) return "onednn.impl asks for oneDNN's primitive";
  if (o.precision != ProviderConfig::Precision::kFp32) return "not float32";
  // The cells whose math oneDNN's primitive lacks take a small-cell kernel by another way
  // (rnn_kernel.cc, create_rnn_kernel): every run, whatever the size.
  if (general_cell_math(spec)) return "clip or activations of the general path";
  std::string why = small_kernel_declined(ctx.node(), ctx.graph(), spec);
  if (!why.empty()) return why;
  const int64_t I = ctx.constant_input(kRnnW)->dim(2), H = ctx.constant_input(kRnnR)->dim(2);
  const int64_t macs = spec.num_gates() * H * (I + H);
  if (any_size) return "";
  if (mid_sized) {
    if (macs <= kSmallCellMaxMacs || macs > mid_cell_max_macs(spec.cell, H, core_l2_bytes()) ||
        H > kMidCellMaxHidden)
      return "not a mid-sized cell";
  } else if (macs > kSmallCellMaxMacs) {
    return "cell too large";
  }
  return "";
}

const char* small_cells_isa() { return avx512::have_avx512() ? "AVX-512" : "AVX2"; }

namespace {

std::unique_ptr<Kernel> make_small_cell(const Node& node, RnnSpec spec, int threads,
                                        const small::CellWeights& cw) {
  switch (spec.cell) {
    case RnnCell::kLstm:
      return small::make_small_lstm(node, std::move(spec), threads, cw);
    case RnnCell::kGru:
      return small::make_small_gru(node, std::move(spec), threads, cw);
    default:
      return small::make_small_rnn(node, std::move(spec), threads, cw);
  }
}

// create_deferred_small_rnn_kernel's: the node's W and R rebuilt from the team's slices at the
// first run that reaches it (any later one waits for that build), packed, and dropped.
class DeferredSmallCellKernel final : public Kernel {
 public:
  DeferredSmallCellKernel(const Node& node, RnnSpec spec, int threads, OnnxWeightsSource source,
                          Shape w_shape, Shape r_shape, Tensor b, Tensor p)
      : node_(node),
        spec_(std::move(spec)),
        threads_(threads),
        source_(std::move(source)),
        w_shape_(std::move(w_shape)),
        r_shape_(std::move(r_shape)),
        b_(std::move(b)),
        p_(std::move(p)) {}

  Status run(KernelContext& ctx) const override {
    // A run the kernel would reject does not build it.
    const Tensor w = Tensor::borrow(nullptr, DType::kFloat32, w_shape_);
    const Tensor r = Tensor::borrow(nullptr, DType::kFloat32, r_shape_);
    RECUR_RETURN_IF_ERROR(check_rnn_inputs(node_, spec_, ctx.input(kRnnX), &w, &r,
                                           b_.defined() ? &b_ : nullptr, ctx.input(kRnnSeqLens),
                                           ctx.input(kRnnInitialH), ctx.input(kRnnInitialC),
                                           p_.defined() ? &p_ : nullptr)
                              .status());
    std::call_once(built_, [this] { build(); });
    return kernel_->run(ctx);
  }

 private:
  void build() const {
    Tensor w = Tensor::empty(DType::kFloat32, w_shape_);
    Tensor r = Tensor::empty(DType::kFloat32, r_shape_);
    for (Tensor* t : {&w, &r}) {
      const int64_t rows = t->dim(1), K = t->dim(2);
      std::vector<int64_t> row_at(static_cast<size_t>(rows));
      for (int64_t s = 0; s < rows; ++s) row_at[static_cast<size_t>(s)] = s * K;
      for (int64_t d = 0; d < t->dim(0); ++d)
        source_(d, t == &w, row_at, 1, t->data<float>() + d * rows * K);
    }
    small::CellWeights cw{&w, &r, b_.defined() ? &b_ : nullptr, p_.defined() ? &p_ : nullptr};
    kernel_ = make_small_cell(node_, spec_, threads_, cw);
  }

  const Node& node_;
  const RnnSpec spec_;
  const int threads_;
  const OnnxWeightsSource source_;
  const Shape w_shape_, r_shape_;
  const Tensor b_, p_;
  mutable std::once_flag built_;
  mutable std::unique_ptr<Kernel> kernel_;
};

// A copy of constant input i of `ctx`'s node, or an undefined tensor where it has none.
RECUR_LOAD_PATH Tensor copy_of_constant(const CompileContext& ctx, size_t i) {
  const Tensor* t = ctx.constant_input(i);
  if (!t) return Tensor();
  Tensor copy = Tensor::empty(t->dtype(), t->shape());
  std::memcpy(copy.data<float>(), t->data<float>(), t->nbytes());
  return copy;
}

}  // namespace

RECUR_LOAD_PATH Result<std::unique_ptr<Kernel>> create_small_rnn_kernel(CompileContext& ctx,
                                                                        RnnSpec spec,
                                                                        const OnednnOptions& o) {
  const small::CellWeights cw = small::CellWeights::of(ctx);
  const Tensor x_stand_in = Tensor::borrow(nullptr, DType::kFloat32, {1, 1, cw.w->dim(2)});
  RECUR_RETURN_IF_ERROR(check_rnn_inputs(ctx.node(), spec, &x_stand_in, cw.w, cw.r, cw.b, nullptr,
                                         nullptr, nullptr, cw.p)
                            .status());
  return make_small_cell(ctx.node(), std::move(spec), o.max_threads, cw);
}

RECUR_LOAD_PATH Result<std::unique_ptr<Kernel>> create_deferred_small_rnn_kernel(
    CompileContext& ctx, RnnSpec spec, const OnednnOptions& o, OnnxWeightsSource source,
    const Shape& w_shape, const Shape& r_shape) {
  const Tensor w = Tensor::borrow(nullptr, DType::kFloat32, w_shape);
  const Tensor r = Tensor::borrow(nullptr, DType::kFloat32, r_shape);
  const Tensor x_stand_in = Tensor::borrow(nullptr, DType::kFloat32, {1, 1, w.dim(2)});
  RECUR_RETURN_IF_ERROR(check_rnn_inputs(ctx.node(), spec, &x_stand_in, &w, &r,
                                         ctx.constant_input(kRnnB), nullptr, nullptr, nullptr,
                                         ctx.constant_input(kRnnP))
                            .status());
  Tensor b = copy_of_constant(ctx, kRnnB), p = copy_of_constant(ctx, kRnnP);
  for (size_t i : {kRnnB, kRnnP})
    if (ctx.constant_input(i)) ctx.release_input_now(i);
  return std::unique_ptr<Kernel>(std::make_unique<DeferredSmallCellKernel>(
      ctx.node(), std::move(spec), o.max_threads, std::move(source), w_shape, r_shape, std::move(b),
      std::move(p)));
}

}  // namespace recur::onednn
