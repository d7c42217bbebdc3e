// The kernel's run paths: all sequences of length T in one primitive per job, and unequal
// sequence lengths as time segments over the rows still active.
#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "providers/onednn/rnn/rnn_kernel.h"
#include "runtime/provider/repack_count.h"

namespace recur::onednn::rnn {

namespace {

// Time steps per primitive call when the run may be cancelled: about 2 ms of work at a
// conservative 20 GFLOP/s, a power of two so that the blocks of a sequence share one plan.
int64_t cancel_block(const RunIo& io, int64_t gates) {
  const double flops_per_step = 2.0 * static_cast<double>(io.N) *
                                static_cast<double>(gates * io.H) *
                                static_cast<double>(io.I + io.H);
  const double target = 40e6;
  int64_t b = 1;
  while (b < io.T && static_cast<double>(2 * b) * flops_per_step <= target) b *= 2;
  return b;
}

}  // namespace

Status RnnKernel::execute(const Plan& plan, int d, const RunWeights* rw, const Exec& e) const {
  const RnnDescs& ds = plan.descs;
  const size_t ud = static_cast<size_t>(d);
  const void* wl = rw ? rw->layer[ud].data() : plan.weights_layer[ud]->data;
  const void* wi = rw ? rw->iter[ud].data() : plan.weights_iter[ud]->data;
  const void* b = rw ? rw->bias[ud].data() : bias_[ud].data();
  ScratchPool::Lease scratch = scratch_.acquire(plan.scratch_bytes);
  ArgsPool::Lease args = plan.args[ud].acquire();
  return dnnl_try(node_, [&] {
    args.bind(DNNL_ARG_SRC_LAYER, ds.src_layer, e.x);
    args.bind(DNNL_ARG_WEIGHTS_LAYER, ds.weights_layer, wl);
    args.bind(DNNL_ARG_WEIGHTS_ITER, ds.weights_iter, wi);
    args.bind(DNNL_ARG_BIAS, ds.bias, b);
    args.bind(DNNL_ARG_DST_LAYER, ds.dst_layer, e.y);
    args.bind(DNNL_ARG_SCRATCHPAD, plan.scratchpad, scratch.data());
    if (!ds.src_iter.is_zero()) {
      args.bind(DNNL_ARG_SRC_ITER, ds.src_iter, e.h0);
      if (spec_.cell == RnnCell::kLstm) args.bind(DNNL_ARG_SRC_ITER_C, ds.src_iter_c, e.c0);
    }
    if (!ds.dst_iter.is_zero()) {
      args.bind(DNNL_ARG_DST_ITER, ds.dst_iter, e.hn);
      if (spec_.cell == RnnCell::kLstm) args.bind(DNNL_ARG_DST_ITER_C, ds.dst_iter_c, e.cn);
    }
    if (has_peephole()) {
      const void* p = rw ? rw->peephole[ud].data() : peephole_[ud].data();
      args.bind(DNNL_ARG_WEIGHTS_PEEPHOLE, ds.weights_peephole, p);
    }
    ThreadScope scope(plan.threads);
    args.execute(plan.primitive, thread_stream());
    thread_stream().wait();
  });
}

Status RnnKernel::repack_run_weights(KernelContext& ctx, const Tensor* w, const Tensor* r,
                                     const Tensor* b, const Tensor* p, int64_t I, int64_t H,
                                     RunWeights& rw) const {
  for (const Tensor* t : {w, r, b, p}) {
    if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "oneDNN RNN weights must be float32 on the host");
    }
  }
  count_run_time_repack();
  const OnednnRnnGeometry g = OnednnRnnGeometry::of(spec_, I, H);
  const int64_t G = g.gates(), Gb = g.bias_gates(), Dn = D();
  std::vector<float> wl(static_cast<size_t>(g.weights_size(I))),
      wi(static_cast<size_t>(g.weights_size(H))), bias(static_cast<size_t>(g.bias_size())), peep;
  RECUR_RETURN_IF_ERROR(
      onnx_to_onednn_weights(g, w->data<float>(), I, OnednnWeightsFormat::kLdigo, wl.data()));
  RECUR_RETURN_IF_ERROR(
      onnx_to_onednn_weights(g, r->data<float>(), H, OnednnWeightsFormat::kLdigo, wi.data()));
  RECUR_RETURN_IF_ERROR(onnx_to_onednn_bias(g, b ? b->data<float>() : nullptr, bias.data()));
  if (has_peephole()) {
    peep.resize(static_cast<size_t>(g.peephole_size()));
    RECUR_RETURN_IF_ERROR(onnx_to_onednn_peephole(g, p ? p->data<float>() : nullptr, peep.data()));
  }
  for (int64_t d = 0; d < Dn; ++d) {
    rw.layer.emplace_back(wl.begin() + d * I * G * H, wl.begin() + (d + 1) * I * G * H);
    rw.iter.emplace_back(wi.begin() + d * H * G * H, wi.begin() + (d + 1) * H * G * H);
    rw.bias.emplace_back(bias.begin() + d * Gb * H, bias.begin() + (d + 1) * Gb * H);
    if (has_peephole())
      rw.peephole.emplace_back(peep.begin() + d * 3 * H, peep.begin() + (d + 1) * 3 * H);
  }
  return ok_status();
}

Status RnnKernel::run(KernelContext& ctx) const {
  const Tensor* x = ctx.input(kRnnX);
  const Tensor* w = const_weights_ ? &w_shape_ : ctx.input(kRnnW);
  const Tensor* r = const_weights_ ? &r_shape_ : ctx.input(kRnnR);
  const Tensor* b = const_weights_ ? (b_shape_.defined() ? &b_shape_ : nullptr) : ctx.input(kRnnB);
  const Tensor* p = const_weights_ ? (p_shape_.defined() ? &p_shape_ : nullptr) : ctx.input(kRnnP);
  const Tensor* seq = ctx.input(kRnnSeqLens);
  const Tensor* h0 = ctx.input(kRnnInitialH);
  const Tensor* c0 = spec_.cell == RnnCell::kLstm ? ctx.input(kRnnInitialC) : nullptr;
  RECUR_ASSIGN_OR_RETURN(RnnDims dims, check_rnn_inputs(node_, spec_, x, w, r, b, seq, h0, c0, p));
  if (x->dtype() != DType::kFloat32) {
    return ctx.error(ErrorCode::kNotImplemented, "the oneDNN RNN kernel runs float32 only, X is " +
                                                     std::string(dtype_name(x->dtype())));
  }
  for (const Tensor* t : {x, seq, h0, c0}) {
    if (t && !t->is_cpu())
      return ctx.error(ErrorCode::kInvalidArgument, "inputs must be on the host");
  }
  RunIo io;
  io.T = dims.seq_length;
  io.N = dims.batch;
  io.I = dims.input_size;
  io.H = dims.hidden;
  io.D = D();
  io.l0 = io.x_l0 = spec_.layout == 0;
  io.x = x->data<float>();
  io.h0 = h0 ? h0->data<float>() : nullptr;
  io.c0 = c0 ? c0->data<float>() : nullptr;
  RECUR_RETURN_IF_ERROR(io.allocate_outputs(ctx, spec_.cell == RnnCell::kLstm));
  io.y_numel = static_cast<size_t>(io.T * io.D * io.N * io.H);
  if (io.T == 0 || io.N == 0) {
    if (io.yh) std::fill(io.yh, io.yh + io.state_n(), 0.0f);
    if (io.yc) std::fill(io.yc, io.yc + io.state_n(), 0.0f);
    return ok_status();
  }
  if (Status st = check_onednn_rnn_shape(io.T, io.N, io.I, io.H, io.D, geom_.gates()); !st.ok()) {
    return ctx.error(ErrorCode::kNotImplemented, st.message());
  }

  RunWeights rw;
  if (!const_weights_) RECUR_RETURN_IF_ERROR(repack_run_weights(ctx, w, r, b, p, io.I, io.H, rw));
  io.rw = const_weights_ ? nullptr : &rw;

  const int32_t* lens = seq ? seq->data<int32_t>() : nullptr;
  bool uniform = true;
  for (int64_t n = 0; lens && n < io.N; ++n) uniform = uniform && lens[n] == io.T;
  io.ctx = &ctx;
  io.block = ctx.fine_grained_cancel() ? cancel_block(io, geom_.gates()) : 0;
  ObjectPool<RunScratch>::Lease scratch = run_scratch_.acquire();
  io.scratch = &*scratch;
  if (uniform && io.block > 0 && io.block < io.T && io.T <= INT32_MAX) {
    // The segment path with every row of length T runs the sequence block by block.
    std::vector<int32_t>& full = io.scratch->full_lens;
    full.assign(static_cast<size_t>(io.N), static_cast<int32_t>(io.T));
    io.blocks_of_one_pass = true;
    return run_segments(io, full.data());
  }
  return uniform ? run_uniform(io) : run_segments(io, lens);
}

// A primitive's scratchpad holds every step's gates and states: about 0.5 MB per step for 16
// rows of 256 LSTM units on the gemm-based implementation, so a run's memory grows with T, and
// jobs side by side each hold one. Where a run's scratchpads would pass a limit, the sequence
// runs in blocks of steps, each block's final states the next one's initial states:
// - jobs side by side take no more together than one of them would for the whole sequence, or
//   kSideBySideFloor if that is more (below it a call costs more than the memory it saves):
//   bilstm's two directions on 2 threads held 2 x 50 MB, in blocks of 34 steps 2 x 16 MB;
// - no run takes more than kRunScratchCap, whatever T (at T=1000 lstm_large's would be 2 GB).
// Blocks of 15 to 50 steps ran within a few percent of whole sequences on the standard suite
// (docs/semantics.md, "Time blocks").
constexpr double kRunScratchCap = 256.0 * (1 << 20);
constexpr double kSideBySideFloor = 16.0 * (1 << 20);

// An upper bound of one job's scratchpad, so that small runs need no descriptor to learn it:
// 8 floats per gate and 8 per unit, per row and step, above what oneDNN 2.6 asked for on the
// standard suite (bilstm 50 MB of this bound's 65, gru_lbr0 141 of 210, rnn_tanh 75 of 105,
// lstm_med on brgemm 56 of 262).
namespace {

double scratch_bound(int64_t T, int64_t rows, int64_t G, int64_t H) {
  return static_cast<double>(T) * static_cast<double>(rows) * 4.0 *
         (8.0 * static_cast<double>(G * H) + 8.0 * static_cast<double>(H));
}

}  // namespace

int64_t RnnKernel::time_block(int64_t T, int64_t N, int64_t I, int64_t H, const Choice& c,
                              std::span<const Job> jobs) const {
  if (bf16_ || T <= 1 || jobs.empty()) return T;
  if (opts_.time_block > 0) return std::min(T, opts_.time_block);
  const int split = c.split > 1 ? c.split : 1;
  const auto memo = std::make_tuple(T, N, I, H, c.any, c.threads, split);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = blocks_.find(memo); it != blocks_.end()) return it->second;
  const Job& j = jobs.front();
  const ShapeKey key{T,
                     j.n1 - j.n0,
                     I,
                     H,
                     N,
                     is_reverse(j.d),
                     run_mode(jobs, N, T),
                     true,
                     true,
                     act_dir(j.d),
                     c.any,
                     split > 1 ? 1 : c.threads};
  const auto at_once =
      static_cast<double>(std::min<size_t>(jobs.size(), static_cast<size_t>(split)));
  const double bound = scratch_bound(T, j.n1 - j.n0, geom_.gates(), H) * at_once;
  if (bound <= (at_once > 1 ? kSideBySideFloor : kRunScratchCap)) return T;
  int64_t tb = T;
  try {
    // One job's scratchpad for blocks of `steps`. Only descriptors: a primitive of the whole
    // sequence is never built if it does not run.
    auto scratch = [&](int64_t steps) {
      ShapeKey k = key;
      k.T = steps;
      k.ld_t = steps < T ? T : 0;
      const RnnPd pd = create_pd(descs_for(k), k.act_dir, k.reverse, k.threads, false);
      return static_cast<double>(pd.scratchpad.get_size());
    };
    const double whole = scratch(T);
    const double limit =
        at_once > 1 ? std::min(kRunScratchCap, std::max(whole, kSideBySideFloor)) : kRunScratchCap;
    // A scratchpad is a fixed part plus a part per step: more blocks until they fit.
    int64_t blocks = 1;
    for (double bytes = whole * at_once; bytes > limit && tb > 1; bytes = scratch(tb) * at_once) {
      blocks = std::max(
          blocks + 1, static_cast<int64_t>(std::ceil(static_cast<double>(blocks) * bytes / limit)));
      tb = (T + blocks - 1) / blocks;
    }
  } catch (const dnnl::error&) {
    // Left to the plans of the whole sequence, whose creation reports the error.
    tb = T;
  }
  if (blocks_.size() >= 256) blocks_.erase(blocks_.begin());  // as plans_: bounded
  blocks_[memo] = tb;
  return tb;
}

// Every sequence runs all T steps: one primitive per job writes straight into Y and the states.
Status RnnKernel::run_uniform(const RunIo& given) const {
  const bool lstm = spec_.cell == RnnCell::kLstm;
  const BucketKey bucket{given.N, given.I, given.H, t_class(given.T), false};
  RECUR_ASSIGN_OR_RETURN(Choice chosen, choose(bucket, given.T, nullptr));
  // Not in deterministic sessions: the stall guard's choice of one thread hangs on timings,
  // and a oneDNN primitive's sums may split otherwise on another team (on AVX2, under ctest
  // -j2, an LSTM of 256 units gave other last bits on every run after the first).
  bool long_team =
      !opts_.deterministic && chosen.split <= 1 && chosen.threads > 1 && given.T > kLongPassSteps;
  if (long_team && stall_guard_.paused(steady_ns())) {
    // A recent long pass of this node waited for its team (stall_guard.h).
    chosen.threads = 1;
    long_team = false;
    count_smaller_team_run();
  }
  CoreLease lease;
  const Choice c = for_busy_cores(chosen, lease);
  const Jobs jobs = jobs_for(c, given.N);
  const Mode mode = run_mode(jobs, given.N, given.T);
  // The modes whose strides do not depend on T may run in blocks of shared plans: a length
  // past the first few (ExactPlans), and a team's long pass. A team leased for a whole long
  // pass would wait at every step's barrier for the rest of it should another process take
  // one of its cores (busy_cores.h), so each of its blocks leases the team again.
  const bool blocks_ok = !bf16_ && given.block == 0 &&
                         (mode == Mode::kLayout0 || (mode == Mode::kLayout1 && given.N == 1));
  if (blocks_ok && long_team) return run_shared_blocks(given, c, jobs, mode, &chosen, &lease);
  if (blocks_ok && !lengths_.exact(std::make_tuple(given.T, given.N))) {
    return run_shared_blocks(given, c, jobs, mode);
  }
  RunIo io = given;
  if (mode == Mode::kLayout1DenseX) {
    // [N, T, I] -> [T, N, I], rows of I floats (run_mode says why).
    std::vector<float>& dense = io.scratch->dense_x;
    dense.resize(static_cast<size_t>(io.T * io.N * io.I));
    for (int64_t t = 0; t < io.T; ++t)
      for (int64_t n = 0; n < io.N; ++n)
        std::memcpy(dense.data() + (t * io.N + n) * io.I, given.x_at(t, n),
                    static_cast<size_t>(io.I) * sizeof(float));
    io.x = dense.data();
    io.x_l0 = true;
  }
  const int64_t tb = time_block(io.T, io.N, io.I, io.H, c, jobs);
  // Blocks chain their states, so they read and write them whether or not the node does.
  const bool src_iter = io.h0 || io.c0 || tb < io.T;
  const bool dst_iter = io.yh || io.yc || tb < io.T;
  const States states = states_of(io, src_iter, dst_iter);
  const float* h0p = states.h0;
  const float* c0p = states.c0;
  float* hn = states.hn;
  float* cn = states.cn;
  std::vector<std::shared_ptr<const Plan>>& plans = io.scratch->plans;
  RECUR_RETURN_IF_ERROR(
      uniform_plans(c, jobs, io.T, tb, io.N, io.I, io.H, src_iter, dst_iter, plans));
  Status st;
  if (tb < io.T) {
    Exec whole;
    whole.h0 = h0p;
    whole.c0 = c0p;
    whole.hn = hn;
    whole.cn = cn;
    io.scratch->chain.resize((lstm ? 4 : 2) * io.state_n());
    st = run_parallel(jobs.size(), c.split > 1 ? c.split : 1,
                      [&](size_t i) { return run_blocks(io, jobs, i, tb, whole); });
    plans.clear();
    return st;
  }
  const Bf16Mirror m = bf16_ ? mirror_in(io, src_iter ? h0p : nullptr) : Bf16Mirror{};
  // X, Y and h from the bf16 mirror at the f32 tensor's offset; c always from the f32 one.
  auto in = [&](const float* f32, const float* base, const uint16_t* mirror) -> const void* {
    return bf16_ ? static_cast<const void*>(mirror + (f32 - base)) : f32;
  };
  auto out = [&](float* f32, float* base, uint16_t* mirror) -> void* {
    return bf16_ ? static_cast<void*>(mirror + (f32 - base)) : f32;
  };
  st = run_parallel(jobs.size(), c.split > 1 ? c.split : 1, [&](size_t i) {
    const Job& j = jobs[i];
    const int64_t so = io.s_off(j.d, j.n0);
    Exec e;
    e.x = in(io.x_at(0, j.n0), io.x, m.x);
    e.y = out(io.y + io.y_off(0, j.d, j.n0), io.y, m.y);
    if (src_iter) {
      e.h0 = in(h0p + so, h0p, m.h0);
      e.c0 = lstm ? c0p + so : nullptr;
    }
    if (dst_iter) {
      e.hn = out(hn + so, hn, m.hn);
      e.cn = lstm ? cn + so : nullptr;
    }
    return execute(*plans[i], j.d, io.rw, e);
  });
  plans.clear();  // the plans stay in the kernel's cache, not in the pool's scratch
  if (st.ok() && bf16_) mirror_out(io, m, dst_iter ? hn : nullptr);
  return st;
}

// A length without plans of its own (ExactPlans, prim_cache.h): the sequence in blocks of
// ExactPlans' chunk sizes of steps (1, 2, 3, 4, 6, 8, ...: the largest first, up to
// kMaxSharedBlock and time_block's bound; fewer blocks than powers of two, and each block reads
// all of W and R again), each block's final states the next one's initial states, on plans
// keyed by the block's steps, which every length shares (a last block of all the few steps
// left took 870 MiB resident on umx's stream against 749, and no less time). oneDNN makes an
// RNN primitive per number of steps: umx's three BiLSTMs made six a run of a new length.
Status RnnKernel::run_shared_blocks(const RunIo& io, const Choice& c, std::span<const Job> jobs,
                                    Mode mode, const Choice* relet, CoreLease* lease) const {
  const bool lstm = spec_.cell == RnnCell::kLstm;
  const int64_t cap = ExactPlans<int>::chunk_below(
      std::max<int64_t>(1, std::min(relet ? kTeamBlockSteps : kMaxSharedBlock,
                                    time_block(kMaxSharedBlock, io.N, io.I, io.H, c, jobs))));
  std::vector<int64_t>& starts = io.scratch->block_starts;
  starts.clear();
  for (int64_t t = 0; t < io.T;) {
    starts.push_back(t);
    t += ExactPlans<int>::chunk_below(std::min(io.T - t, cap));
  }
  const auto nb = static_cast<int64_t>(starts.size());
  auto steps = [&](int64_t b) { return (b + 1 < nb ? starts[b + 1] : io.T) - starts[b]; };
  // Block b of job j on `threads` threads inside the primitive.
  auto key_of = [&](const Job& j, int64_t b, int threads) {
    return ShapeKey{steps(b), j.n1 - j.n0,  io.I,  io.H,    io.N, is_reverse(j.d), mode, true,
                    true,     act_dir(j.d), c.any, threads, 0};
  };
  std::vector<std::shared_ptr<const Plan>>& plans = io.scratch->plans;
  plans.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Job& j : jobs) {
      for (int64_t b = 0; b < nb; ++b) {
        RECUR_ASSIGN_OR_RETURN(auto plan,
                               get_plan_locked(key_of(j, b, c.split > 1 ? 1 : c.threads)));
        plans.push_back(std::move(plan));
      }
    }
  }
  // The blocks chain their states, so they read and write them whether or not the node does.
  const States states = states_of(io, true, true);
  Exec whole;
  whole.h0 = states.h0;
  whole.c0 = states.c0;
  whole.hn = states.hn;
  whole.cn = states.cn;
  io.scratch->chain.resize((lstm ? 4 : 2) * io.state_n());
  count_shared_plan_run();
  // A team's blocks (one job at a time: a team is no split) on the team each block's lease
  // gets, one thread for the rest of the pass once a block waited for its team (stall_guard.h:
  // a block's time is the time to the next block's plan_of); a plan of another team size is
  // made the first time a lease gives it.
  std::shared_ptr<const Plan> other;
  bool counted = false, stalled = false, timed = false;
  int64_t started = 0, timed_rows = 0, timed_steps = 0;
  auto plan_of = [&](size_t i, int64_t b) -> const Plan& {
    const Plan& p = *plans[static_cast<size_t>(static_cast<int64_t>(i) * nb + b)];
    if (!relet) return p;
    if (timed) {
      const int64_t now = steady_ns();
      stalled = stalled || stall_guard_.record(timed_rows, timed_steps, now - started, now);
    }
    lease->acquire(stalled ? 1 : relet->threads, opts_.team().shrink);
    const Plan* q = &p;
    if (lease->threads() != p.threads) {
      if (!counted) count_smaller_team_run();
      counted = true;
      Result<std::shared_ptr<const Plan>> got = get_plan(key_of(jobs[i], b, lease->threads()));
      if (got.ok()) {  // else the block runs on the team it was planned for
        other = std::move(got).value();
        q = other.get();
      }
    }
    timed = q->threads == relet->threads;
    timed_rows = jobs[i].n1 - jobs[i].n0;
    timed_steps = steps(b);
    started = steady_ns();
    return *q;
  };
  const Status st = run_parallel(jobs.size(), c.split > 1 ? c.split : 1, [&](size_t i) {
    return walk_blocks(
        io, jobs[i], nb, [&](int64_t b) { return starts[static_cast<size_t>(b)]; },
        [&](int64_t b) -> const Plan& { return plan_of(i, b); }, whole);
  });
  plans.clear();  // the plans stay in the kernel's cache, not in the pool's scratch
  return st;
}

// Job j's nb blocks in time order, block b from step start_of(b) on plan_of(b), the reverse
// direction's from the last block back. Each block starts from the previous one's final states,
// which alternate between two buffers shaped like the node's states (io.scratch->chain);
// `whole` holds the run's initial and final states.
template <class StartOf, class PlanOf>
Status RnnKernel::walk_blocks(const RunIo& io, const Job& j, int64_t nb, StartOf start_of,
                              PlanOf plan_of, const Exec& whole) const {
  const bool lstm = spec_.cell == RnnCell::kLstm;
  const bool rev = is_reverse(j.d);
  const int64_t so = io.s_off(j.d, j.n0);
  const size_t sn = io.state_n();
  float* chain = io.scratch->chain.data();
  float* h[2] = {chain + so, chain + sn + so};
  float* c[2] = {lstm ? chain + 2 * sn + so : nullptr, lstm ? chain + 3 * sn + so : nullptr};
  for (int64_t k = 0; k < nb; ++k) {
    const int64_t b = rev ? nb - 1 - k : k;  // the block's place in time
    const int64_t t0 = start_of(b);
    if (io.ctx) RECUR_RETURN_IF_ERROR(io.ctx->check_cancelled("time step", t0));
    Exec e;
    e.x = io.x_at(t0, j.n0);
    e.y = io.y + io.y_off(t0, j.d, j.n0);
    e.h0 = k == 0 ? static_cast<const float*>(whole.h0) + so : h[k % 2];
    e.hn = k == nb - 1 ? static_cast<float*>(whole.hn) + so : h[(k + 1) % 2];
    if (lstm) {
      e.c0 = k == 0 ? static_cast<const float*>(whole.c0) + so : c[k % 2];
      e.cn = k == nb - 1 ? static_cast<float*>(whole.cn) + so : c[(k + 1) % 2];
    }
    RECUR_RETURN_IF_ERROR(execute(plan_of(b), j.d, io.rw, e));
  }
  return ok_status();
}

// Job i's blocks of tb steps, the last one short where tb does not divide T.
Status RnnKernel::run_blocks(const RunIo& io, std::span<const Job> jobs, size_t i, int64_t tb,
                             const Exec& whole) const {
  const int64_t nb = (io.T + tb - 1) / tb;
  const bool short_tail = io.T % tb != 0;
  return walk_blocks(
      io, jobs[i], nb, [tb](int64_t b) { return b * tb; },
      [&](int64_t b) -> const Plan& {
        return *io.scratch->plans[b == nb - 1 && short_tail ? jobs.size() + i : i];
      },
      whole);
}

Bf16Mirror RnnKernel::mirror_in(const RunIo& io, const float* h0) const {
  const size_t xn = static_cast<size_t>(io.T * io.N * io.I), sn = io.state_n();
  Bf16Mirror m{bf16_pool_.acquire((xn + io.y_numel + 2 * sn) * sizeof(uint16_t))};
  m.x = static_cast<uint16_t*>(m.lease.data());
  m.y = m.x + xn;
  m.h0 = m.y + io.y_numel;
  m.hn = m.h0 + sn;
  f32_to_bf16(io.x, m.x, xn);
  if (h0) f32_to_bf16(h0, m.h0, sn);
  return m;
}

void RnnKernel::mirror_out(const RunIo& io, const Bf16Mirror& m, float* hn) const {
  bf16_to_f32(m.y, io.y, io.y_numel);
  if (hn) bf16_to_f32(m.hn, hn, io.state_n());
}

RnnKernel::States RnnKernel::states_of(const RunIo& io, bool src_iter, bool dst_iter) const {
  const bool lstm = spec_.cell == RnnCell::kLstm;
  States s{io.h0, io.c0, io.yh, io.yc};
  if (src_iter && (!s.h0 || (lstm && !s.c0))) {
    std::vector<float>& zeros = io.scratch->zeros;
    zeros.assign(io.state_n(), 0.0f);
    if (!s.h0) s.h0 = zeros.data();
    if (lstm && !s.c0) s.c0 = zeros.data();
  }
  if (dst_iter && (!s.hn || (lstm && !s.cn))) {
    std::vector<float>& spare = io.scratch->spare;
    spare.resize(io.state_n());
    if (!s.hn) s.hn = spare.data();
    if (lstm && !s.cn) s.cn = spare.data();
  }
  return s;
}

// Sequence lengths that differ: time segments over the rows still active, longest first.
Status RnnKernel::run_segments(const RunIo& io, const int32_t* lens) const {
  // Steps past a row's length are zeros in Y; with every row full (a run in blocks) every
  // value is written, and zeroing a long Y first could not be interrupted.
  bool all_full = true;
  for (int64_t n = 0; n < io.N; ++n) all_full = all_full && lens[n] == io.T;
  if (!all_full) std::fill(io.y, io.y + io.y_numel, 0.0f);
  if (io.yh) std::fill(io.yh, io.yh + io.state_n(), 0.0f);
  if (io.yc) std::fill(io.yc, io.yc + io.state_n(), 0.0f);
  const int64_t N = io.N;
  SegmentRun& sr = io.scratch->segments;
  sr.active = 0;
  sr.order.resize(static_cast<size_t>(N));
  std::iota(sr.order.begin(), sr.order.end(), 0);
  // Ties by row, as a stable sort would leave them: std::stable_sort takes a buffer from the
  // heap on every call, std::sort none.
  std::sort(sr.order.begin(), sr.order.end(), [&](int64_t a, int64_t b2) {
    return lens[a] > lens[b2] || (lens[a] == lens[b2] && a < b2);
  });
  while (sr.active < N && lens[sr.order[static_cast<size_t>(sr.active)]] > 0) ++sr.active;
  if (sr.active == 0) return ok_status();
  sr.L.resize(static_cast<size_t>(sr.active));
  for (int64_t j = 0; j < sr.active; ++j)
    sr.L[static_cast<size_t>(j)] = lens[sr.order[static_cast<size_t>(j)]];
  const size_t act_states = static_cast<size_t>(sr.active) * static_cast<size_t>(io.H);
  sr.cur_h.resize(act_states);
  sr.nxt_h.resize(act_states);
  if (spec_.cell == RnnCell::kLstm) {
    sr.cur_c.resize(act_states);
    sr.nxt_c.resize(act_states);
  }
  for (int d = 0; d < io.D; ++d) RECUR_RETURN_IF_ERROR(run_direction(io, d, sr));
  return ok_status();
}

// Direction d, segment after segment, each chaining its final states into the next.
Status RnnKernel::run_direction(const RunIo& io, int d, SegmentRun& sr) const {
  bool have_state = io.h0 || io.c0;
  if (have_state) load_states(io, d, sr);
  int64_t s = 0;
  while (s < sr.L[0]) {
    if (io.ctx) RECUR_RETURN_IF_ERROR(io.ctx->check_cancelled("time step", s));
    int64_t k = 0;
    while (k < sr.active && sr.L[static_cast<size_t>(k)] > s) ++k;
    int64_t e = sr.L[static_cast<size_t>(k - 1)];
    if (io.block > 0) e = std::min(e, s + io.block);
    RECUR_RETURN_IF_ERROR(run_segment(io, d, s, e, k, have_state, sr));
    std::swap(sr.cur_h, sr.nxt_h);
    std::swap(sr.cur_c, sr.nxt_c);
    have_state = true;
    s = e;
  }
  return ok_status();
}

// The initial states of direction d into the active rows' order (zeros where not given).
void RnnKernel::load_states(const RunIo& io, int d, SegmentRun& sr) const {
  const size_t hsz = static_cast<size_t>(io.H);
  for (int64_t j = 0; j < sr.active; ++j) {
    const int64_t n = sr.order[static_cast<size_t>(j)];
    float* dh = sr.cur_h.data() + static_cast<size_t>(j) * hsz;
    if (io.h0)
      std::memcpy(dh, io.h0 + io.s_off(d, n), hsz * sizeof(float));
    else
      std::fill(dh, dh + hsz, 0.0f);
    if (spec_.cell == RnnCell::kLstm) {
      float* dc = sr.cur_c.data() + static_cast<size_t>(j) * hsz;
      if (io.c0)
        std::memcpy(dc, io.c0 + io.s_off(d, n), hsz * sizeof(float));
      else
        std::fill(dc, dc + hsz, 0.0f);
    }
  }
}

// Steps [s, e) of the first k active rows, e at most the length of the shortest of them: their
// X gathered into one packed primitive, its Y scattered back, and the final states of the rows
// that end at e written out.
Status RnnKernel::run_segment(const RunIo& io, int d, int64_t s, int64_t e, int64_t k,
                              bool have_state, SegmentRun& sr) const {
  const bool lstm = spec_.cell == RnnCell::kLstm;
  const bool rev = is_reverse(d);
  const size_t hsz = static_cast<size_t>(io.H), isz = static_cast<size_t>(io.I);
  const std::vector<int64_t>& L = sr.L;
  const int64_t ts = e - s;
  // The step of row j at segment step tau; the reverse direction walks each sequence
  // backward from its own last valid step.
  auto step = [&](int64_t tau, int64_t j) {
    return rev ? L[static_cast<size_t>(j)] - 1 - (s + tau) : s + tau;
  };
  sr.xs.resize(static_cast<size_t>(ts * k) * isz);
  sr.ys.resize(static_cast<size_t>(ts * k) * hsz);
  for (int64_t tau = 0; tau < ts; ++tau)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(sr.xs.data() + static_cast<size_t>(tau * k + j) * isz,
                  io.x_at(step(tau, j), sr.order[static_cast<size_t>(j)]), isz * sizeof(float));
  RECUR_ASSIGN_OR_RETURN(
      Choice chosen,
      choose(BucketKey{k, io.I, io.H, t_class(io.blocks_of_one_pass ? io.T : ts), true}, ts,
             nullptr));
  CoreLease lease;
  const Choice c = for_busy_cores(chosen, lease);
  const ShapeKey key{ts,         k,    io.I,       io.H,  k,        false, Mode::kPacked,
                     have_state, true, act_dir(d), c.any, c.threads};
  RECUR_ASSIGN_OR_RETURN(auto plan, get_plan(key));
  Exec ex;
  ex.x = sr.xs.data();
  ex.y = sr.ys.data();
  ex.h0 = have_state ? sr.cur_h.data() : nullptr;
  ex.c0 = have_state && lstm ? sr.cur_c.data() : nullptr;
  ex.hn = sr.nxt_h.data();
  ex.cn = lstm ? sr.nxt_c.data() : nullptr;
  if (bf16_) {
    // The states chain between segments in f32, rounded to bf16 at each segment's start as
    // oneDNN rounds them between its own steps.
    sr.xs_b.resize(sr.xs.size());
    sr.ys_b.resize(sr.ys.size());
    sr.cur_h_b.resize(sr.cur_h.size());
    sr.nxt_h_b.resize(sr.nxt_h.size());
    f32_to_bf16(sr.xs.data(), sr.xs_b.data(), sr.xs.size());
    if (have_state) f32_to_bf16(sr.cur_h.data(), sr.cur_h_b.data(), sr.cur_h.size());
    ex.x = sr.xs_b.data();
    ex.y = sr.ys_b.data();
    ex.h0 = have_state ? sr.cur_h_b.data() : nullptr;
    ex.hn = sr.nxt_h_b.data();
  }
  RECUR_RETURN_IF_ERROR(execute(*plan, d, io.rw, ex));
  if (bf16_) {
    bf16_to_f32(sr.ys_b.data(), sr.ys.data(), sr.ys.size());
    bf16_to_f32(sr.nxt_h_b.data(), sr.nxt_h.data(), sr.nxt_h.size());
  }
  for (int64_t tau = 0; tau < ts; ++tau)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(io.y + io.y_off(step(tau, j), d, sr.order[static_cast<size_t>(j)]),
                  sr.ys.data() + static_cast<size_t>(tau * k + j) * hsz, hsz * sizeof(float));
  for (int64_t j = 0; j < k; ++j) {
    if (L[static_cast<size_t>(j)] != e) continue;
    const int64_t n = sr.order[static_cast<size_t>(j)];
    if (io.yh)
      std::memcpy(io.yh + io.s_off(d, n), sr.nxt_h.data() + static_cast<size_t>(j) * hsz,
                  hsz * sizeof(float));
    if (io.yc)
      std::memcpy(io.yc + io.s_off(d, n), sr.nxt_c.data() + static_cast<size_t>(j) * hsz,
                  hsz * sizeof(float));
  }
  return ok_status();
}

}  // namespace recur::onednn::rnn
