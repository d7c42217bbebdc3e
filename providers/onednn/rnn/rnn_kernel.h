// The oneDNN RNN kernel shared by LSTM, GRU and RNN (see rnn_common.h for how it runs), split by
// job: loading weights and the kernel factory (rnn_kernel.cc), the implementation chooser
// (rnn_chooser.cc), the plan cache (rnn_plans.cc) and the run paths (rnn_run.cc).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "converters/onednn_weights.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/rnn/rnn_bf16.h"
#include "providers/onednn/rnn/rnn_chooser.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "providers/onednn/rnn/rnn_desc.h"
#include "providers/onednn/rnn/stall_guard.h"

namespace recur::onednn::rnn {

struct Plan {
  dnnl::primitive primitive;
  int threads = 1;
  std::string impl;
  RnnDescs descs;
  dnnl::memory::desc scratchpad;
  size_t scratch_bytes = 0;
  // Constant weights in this primitive's format, per direction.
  std::vector<std::shared_ptr<AlignedBuffer>> weights_layer, weights_iter;
  // The memory objects of its executions, per direction.
  mutable ArgsPool args[2];
};

struct WeightBuf {
  dnnl::memory::desc desc;
  std::shared_ptr<AlignedBuffer> buf;
  // A packed GEMM format (rnn_packed) is laid out for the thread count it was packed on: a bf16
  // one packed on 2 threads corrupted the heap when run on 1. 0 for the other formats.
  int threads = 0;
};

// Per-run weights when W/R/B/P are graph inputs: ldigo, per direction.
struct RunWeights {
  std::vector<std::vector<float>> layer, iter, bias, peephole;
};

// One primitive execution of a run: direction d over rows [n0, n1).
struct Job {
  int d = 0;
  int64_t n0 = 0, n1 = 0;
};
// A run's jobs: one per direction and batch slice, so a few (no heap up to 16).
using Jobs = SmallVector<Job, 16>;

struct RunScratch;

// What one run of the primitive kernel reads and writes (RnnBuffers), and how it runs.
struct RunIo : RnnBuffers {
  size_t y_numel = 0;
  const RunWeights* rw = nullptr;  // null: the constant weights held by the plans
  // Cancellation is checked between primitive calls; `block` > 0 caps the time steps of one
  // call so that the checks come often (RunOptions::cancellable).
  const KernelContext* ctx = nullptr;
  int64_t block = 0;
  // The blocks are one uniform sequence of T steps cut for cancellation: each chooses as a pass
  // of T would (a team leased for block after block of a long sequence would stall at every
  // step while another process held its core, and the run's cancellation with it).
  bool blocks_of_one_pass = false;
  RunScratch* scratch = nullptr;  // the run's, leased from the kernel
  size_t state_n() const { return static_cast<size_t>(D * N * H); }
};

// The unequal-lengths path's rows by decreasing length and its state and segment buffers.
struct SegmentRun {
  std::vector<int64_t> order;  // rows by decreasing length
  std::vector<int64_t> L;      // lengths of the `active` (non-empty) rows, in that order
  int64_t active = 0;
  std::vector<float> cur_h, nxt_h, cur_c, nxt_c, xs, ys;
  // Their bf16 mirrors (X, Y, h) for the bf16 precision.
  std::vector<uint16_t> xs_b, ys_b, cur_h_b, nxt_h_b;
};

// What a run of the kernel works in besides its outputs, leased from the kernel's pool so that
// the vectors keep their capacity from run to run (issue 13: no allocation in the steady state).
struct RunScratch {
  SegmentRun segments;
  std::vector<std::shared_ptr<const Plan>> plans;  // the uniform path's, one per job
  std::vector<float> zeros, spare;                 // absent initial / final states
  std::vector<float> chain;        // a blocked run's states between blocks: h twice, then c twice
  std::vector<int32_t> full_lens;  // a cancellable run's uniform lengths
  std::vector<float> dense_x;      // kLayout1DenseX: X as [T, N, I]
  std::vector<int64_t> block_starts;  // run_shared_blocks' blocks
};

// The bf16 mirrors of one run's X, Y and hidden states, in the layouts of the f32 tensors (so
// that one offset serves both), in one buffer leased from the kernel's pool.
struct Bf16Mirror {
  ScratchPool::Lease lease;
  uint16_t* x = nullptr;
  uint16_t* y = nullptr;
  uint16_t* h0 = nullptr;
  uint16_t* hn = nullptr;
};

// Runs f(i) for i in [0, n): with threads > 1 on the job pool, the caller included (each f
// runs its primitive single-threaded), else in order. Returns the first error.
template <class F>
Status run_parallel(size_t n, int threads, F&& f) {
  // The statuses of a few jobs live on the stack.
  std::array<Status, 16> few;
  std::vector<Status> many(n > few.size() ? n : 0);
  Status* st = n > few.size() ? many.data() : few.data();
  if (threads > 1 && n > 1) {
    run_jobs(n, threads - 1, [&](size_t i) { st[i] = f(i); });
  } else {
    for (size_t i = 0; i < n; ++i) {
      st[i] = f(i);
      if (!st[i].ok()) break;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!st[i].ok()) return st[i];
  return ok_status();
}

// Where another kernel of the node (row_team.h) holds W and R and takes the runs of 1 to
// max_rows rows: RnnKernel makes its ldigo copy from there at the first plan it builds, and
// builds none at load for a static shape of those rows.
struct SharedWeights {
  OnnxWeightsSource source;
  int64_t max_rows = 0;
  Shape w_shape, r_shape;  // of the ONNX W and R, which the other kernel may have released
};

class RnnKernel final : public Kernel {
 public:
  RnnKernel(const Node& node, RnnSpec spec, OnednnOptions opts)
      : node_(node), spec_(std::move(spec)), opts_(opts), lengths_(!opts.deterministic) {}

  Status init(CompileContext& ctx, SharedWeights shared = {});
  Status run(KernelContext& ctx) const override;

 private:
  int64_t D() const { return spec_.num_directions(); }
  bool is_reverse(int d) const {
    return spec_.direction == RnnDirection::kReverse || (D() == 2 && d == 1);
  }
  bool has_peephole() const { return spec_.cell == RnnCell::kLstm && has_p_; }
  int act_dir(int d) const {
    return spec_.cell == RnnCell::kRnn && D() == 2 &&
                   !(spec_.activation(0, 0) == spec_.activation(1, 0))
               ? d
               : 0;
  }
  RnnDescs descs_for(const ShapeKey& k) const {
    return rnn_descs(k, spec_, geom_, has_peephole(), bf16_);
  }
  RnnPd create_pd(const RnnDescs& d, int dir, bool reverse, int threads,
                  bool make_primitive = true) const {
    return create_rnn_pd(spec_, d, dir, reverse, threads, make_primitive);
  }

  // Loading (rnn_kernel.cc).
  void note_graph_weights(CompileContext& ctx) const;
  Result<RnnDims> check_const_weights(CompileContext& ctx, const Tensor* w, const Tensor* r,
                                      const Tensor* b, const Tensor* p);
  Status hold_const_weights(CompileContext& ctx, const Tensor* w, const Tensor* r, const Tensor* b,
                            const Tensor* p, int64_t I, int64_t H);
  // Releases B and P (W and R went in hold_const_weights) and notes what was repacked.
  void release_weights(CompileContext& ctx, const Tensor* b, const Tensor* p) const;
  Status prepare_static_shape(CompileContext& ctx, int64_t I, int64_t H) const;
  // The node's precision (bf16_), noted for explain with the reason when bf16 was asked for
  // and the node stays fp32.
  void choose_precision(CompileContext& ctx, int64_t I, int64_t H);
  std::string bf16_declined(int64_t I, int64_t H) const;

  // The chooser (rnn_chooser.cc).
  Result<Choice> choose(const BucketKey& bucket, int64_t T, std::string* note) const;
  // `c` for a run now, its threads held by `lease` while it runs: while other processes or
  // this one's concurrent runs hold cores, a team or split as large as the cores would wait
  // for a thread that cannot run (busy_cores.h), so it takes the half, quarter, ... that
  // fits. Deterministic sessions and onednn.busy_cores=wait keep `c`.
  Choice for_busy_cores(Choice c, CoreLease& lease) const;
  Candidates candidates(const BucketKey& bucket, int64_t T) const;
  Choice untimed_rule(const BucketKey& bucket, int64_t T, double pass_flops, const Choice& first,
                      bool can_split, bool tiny, bool both_formats) const;
  // The fixed rule's weights format for the threading of `best`: brgemm (any) or gemm.
  bool brgemm_weights(const Choice& best, const BucketKey& bucket) const;
  // The bucket's key in the tuning cache, beside the process-wide tuning_env().
  std::string cache_key(const BucketKey& bucket) const;
  // A cached choice, if the session has a cache, it holds the key, and the choice is still
  // one of the candidates (a stale entry is timed again).
  std::optional<Choice> cached_choice(const BucketKey& bucket, const Candidates& cands) const;
  // The fastest candidate by timing, but the fixed rule's `untimed` unless beaten by 10%.
  Result<Choice> timed_choice(const std::vector<Choice>& cands, const Choice& untimed,
                              const BucketKey& bucket, int64_t T, std::string* detail) const;
  std::vector<bool> screen_omp(const std::vector<Choice>& cands, const BucketKey& bucket) const;
  Result<RaceTimes> race(const std::vector<Choice>& cands, const BucketKey& bucket, int64_t tp,
                         std::vector<bool> ok) const;
  Status retime_long(const std::vector<Choice>& cands, const BucketKey& bucket, int64_t T,
                     RaceTimes& times, std::string& detail) const;
  void report_choice(const BucketKey& bucket, int64_t T, const Choice& best,
                     const std::string& detail, std::string* note) const;
  Result<std::unique_ptr<ProbeSet>> prepare_probe(const Choice& c, int64_t tp, int64_t N, int64_t I,
                                                  int64_t H, ProbeWeights& weights) const;
  Result<double> time_probe(ProbeSet& set) const;
  Jobs jobs_for(const Choice& c, int64_t N) const;

  // The plan cache (rnn_plans.cc).
  Result<std::shared_ptr<const Plan>> get_plan(const ShapeKey& key) const;
  Result<std::shared_ptr<const Plan>> get_plan_locked(const ShapeKey& key) const;  // mu_ held
  Result<std::shared_ptr<AlignedBuffer>> weights_in(int d, bool layer, const dnnl::memory::desc& md,
                                                    int threads) const;  // mu_ held
  void prune_formats() const;                                            // mu_ held
  // Direction d's W (layer) or R in ldigo, written by shared_.source.
  WeightBuf shared_ldigo(int d, bool layer) const;
  // The uniform-length path's plans, one per job, for sequences of T steps run in blocks of
  // tb (time_block): with tb < T, the plans of the tb-step blocks, then those of the last
  // block if it is shorter, all reading and writing states. Into `plans` (cleared first),
  // whose capacity the caller keeps.
  Status uniform_plans(const Choice& c, std::span<const Job> jobs, int64_t T, int64_t tb, int64_t N,
                       int64_t I, int64_t H, bool src_iter, bool dst_iter,
                       std::vector<std::shared_ptr<const Plan>>& plans) const;
  // The memory mode of a uniform run's primitives. Layout 1 over several rows, each primitive
  // taking the whole batch, runs from a dense [T, N, I] copy of X (kLayout1DenseX): oneDNN 2.6
  // projects the input of all steps in one GEMM only for a dense src_layer, and without it an
  // LSTM of H=256 over 4 rows took 3.5 ms against 2.2 in layout 0 (GRU H=400: 10.2 / 4.6).
  Mode run_mode(std::span<const Job> jobs, int64_t N, int64_t T) const;
  // Time steps per primitive call of a uniform run of T steps with choice c and its jobs
  // (rnn_run.cc): T, or fewer where the scratchpads would pass kRunScratchCap.
  int64_t time_block(int64_t T, int64_t N, int64_t I, int64_t H, const Choice& c,
                     std::span<const Job> jobs) const;

  // The run paths (rnn_run.cc).
  struct Exec {
    const void* x = nullptr;
    const void* h0 = nullptr;
    const void* c0 = nullptr;
    void* y = nullptr;
    void* hn = nullptr;
    void* cn = nullptr;
  };
  Status execute(const Plan& plan, int d, const RunWeights* rw, const Exec& e) const;
  Status repack_run_weights(KernelContext& ctx, const Tensor* w, const Tensor* r, const Tensor* b,
                            const Tensor* p, int64_t I, int64_t H, RunWeights& rw) const;
  Status run_uniform(const RunIo& io) const;
  // The initial and final states a run's primitives read and write: the node's, zeros for an
  // absent initial state that is read (src_iter), a spare for an absent final one that is
  // written (dst_iter), both in the run's scratch.
  struct States {
    const float* h0;
    const float* c0;
    float* hn;
    float* cn;
  };
  States states_of(const RunIo& io, bool src_iter, bool dst_iter) const;
  // run_uniform for a length ExactPlans gives no plans of its own, and for a team's pass past
  // kLongPassSteps, whose blocks of at most kTeamBlockSteps each lease the team again from
  // `lease` (`relet`: the team chosen; rnn_run.cc).
  Status run_shared_blocks(const RunIo& io, const Choice& c, std::span<const Job> jobs, Mode mode,
                           const Choice* relet = nullptr, CoreLease* lease = nullptr) const;
  static constexpr int64_t kMaxSharedBlock = 512;
  // 128: a team's LSTM of 320 units over one row, 2 threads, 600 steps: 7.1 ms in blocks of
  // 128 or 256, 7.8 in blocks of 64; a lost core stalls a block about 6 ms a step.
  static constexpr int64_t kTeamBlockSteps = 128;
  // One job's blocks of steps, chaining the states from block to block (rnn_run.cc).
  template <class StartOf, class PlanOf>
  Status walk_blocks(const RunIo& io, const Job& j, int64_t nb, StartOf start_of, PlanOf plan_of,
                     const Exec& whole) const;
  // run_uniform's jobs in blocks of tb < T steps, chaining the states from block to block.
  Status run_blocks(const RunIo& io, std::span<const Job> jobs, size_t i, int64_t tb,
                    const Exec& whole) const;
  // bf16: X and h0 converted into `m`, and back from it, Y and Y_h.
  Bf16Mirror mirror_in(const RunIo& io, const float* h0) const;
  void mirror_out(const RunIo& io, const Bf16Mirror& m, float* hn) const;
  Status run_segments(const RunIo& io, const int32_t* lens) const;
  Status run_direction(const RunIo& io, int d, SegmentRun& sr) const;
  void load_states(const RunIo& io, int d, SegmentRun& sr) const;
  Status run_segment(const RunIo& io, int d, int64_t s, int64_t e, int64_t k, bool have_state,
                     SegmentRun& sr) const;

  const Node& node_;
  RnnSpec spec_;
  OnednnOptions opts_;
  bool const_weights_ = false;
  bool has_b_ = false;
  bool has_p_ = false;
  // The bf16 precision: X, Y, h and the weights in bf16; the bias and c in f32.
  bool bf16_ = false;
  OnednnRnnGeometry geom_;
  // Shape-only stand-ins for released inputs, so check_rnn_inputs can still check them.
  Tensor w_shape_, r_shape_, b_shape_, p_shape_;
  SharedWeights shared_;
  // Constant weights: bias and peephole (ldgo) per direction.
  std::vector<std::vector<float>> bias_, peephole_;

  mutable std::mutex mu_;
  // Held while timing a bucket, without mu_ (rnn_chooser.cc, choose).
  mutable std::mutex tune_mu_;
  // Per direction, weights_layer (true) and weights_iter (false): the formats held, at
  // formats(d, layer). A flat array, not a map: its lookups inline into the load path.
  mutable std::array<std::vector<WeightBuf>, 4> formats_;
  std::vector<WeightBuf>& formats(int d, bool layer) const {
    return formats_[static_cast<size_t>(2 * d + (layer ? 1 : 0))];
  }
  mutable std::map<ShapeKey, std::shared_ptr<const Plan>> plans_;
  mutable std::map<BucketKey, Choice> choices_;
  // time_block's answers by (T, N, I, H, weights any, threads, split).
  mutable std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, bool, int, int>, int64_t> blocks_;
  mutable ScratchPool scratch_;
  mutable ScratchPool bf16_pool_;
  mutable ObjectPool<RunScratch> run_scratch_;
  // Which (T, N) get plans of their own; the others run in shared blocks (run_shared_blocks).
  mutable ExactPlans<std::tuple<int64_t, int64_t>> lengths_;
  // Whether the team of a long pass waits for cores other processes took (run_shared_blocks).
  mutable StallGuard stall_guard_;
};

}  // namespace recur::onednn::rnn
