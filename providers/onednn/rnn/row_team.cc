// The row-team LSTM, GRU and RNN (row_team.h): a few rows, the units in a slice a thread.
#include "providers/onednn/rnn/row_team.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/rnn/small_cell.h"
#include "providers/onednn/rnn/stall_guard.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

namespace {

using namespace avx512;  // NOLINT: the loops are written in its terms
using small::Io;
using small::round_up;

// The columns of a block of a matrix packed by pack_columns.
constexpr int64_t kBlockCols = kColBlock * kLanes;

// Units [j0, j1) of one direction, hs = j1 - j0 of them, and the columns of their gates packed
// as [K][width] (pack_columns), each gate hs wide so that the cell updates of small_cell.h take
// the slice as a cell of hs units:
// - LSTM: X.W + bias and h.R over i, o, f, c (g1 = gx, 4 hs rounded up to whole vectors);
// - GRU: X.W + bias over z, r (g1, 2 hs rounded up) and then h (g2, hs rounded up); h.R over
//   z, r (r1) and over h (r2), rbh R's bias of h with linear_before_reset (added before r
//   scales it) and zeros without.
// - RNN: X.W + bias and h.R over its one gate (g1, hs rounded up).
struct Slice {
  int64_t j0 = 0, j1 = 0, g1 = 0, g2 = 0;
  std::unique_ptr<AlignedBuffer> w, r1, r2, bias, rbh;
  std::vector<float> peep;  // LSTM: i, o, f (3 hs); empty without P
  int64_t hs() const { return j1 - j0; }
  int64_t gx() const { return g1 + g2; }
};

// The ONNX rows of W (x) and R (r1; a GRU's h gate r2) that a slice's packed columns take,
// -1 for padding, and the widths g1 and g2 of Slice.
struct SliceColumns {
  std::vector<int64_t> x, r1, r2;
  int64_t g1 = 0, g2 = 0;
};

// A direction's walk over the run's rows (longest first, io.order): the step, the block of
// steps whose X.W + bias is done, the rows still running, and the buffers.
struct Walk {
  Walk(const Io& io_in, int d_in, bool rev_in) : io(io_in), d(d_in), rev(rev_in) {}
  const Io& io;
  int d = 0;
  bool rev = false;
  int cur = 0;             // h[cur]: h before the block's first step
  int64_t t0 = 0, t1 = 0;  // the block of steps
  int64_t block = 1;       // steps a block at most (xw_block)
  float* h[2] = {nullptr, nullptr};
  float* c = nullptr;
  float* rh_all = nullptr;
  float* per_slice = nullptr;
  int64_t len(int64_t q) const { return io.len(io.order[q]); }
  // Row q's step at time u: the reverse direction walks each row from its own last step.
  int64_t step_of(int64_t u, int64_t q) const { return rev ? len(q) - 1 - u : u; }
  int64_t live_at(int64_t u) const {
    int64_t a = io.N;
    while (a > 0 && len(a - 1) <= u) --a;
    return a;
  }
};

// Step t of a block: its live rows (a prefix, longest first) and h[cur], h before it. Each
// thread works it out for itself, so that the threads of a block's parallel region need share
// nothing but what the step's jobs write.
struct Step {
  int64_t t = 0, live = 0;
  int cur = 0;
};

class RowTeamKernel final : public Kernel {
 public:
  RowTeamKernel(const Node& node, RnnSpec spec, Threads team, bool apart)
      : node_(node),
        spec_(std::move(spec)),
        general_(general_cell_math(spec_)),
        team_(team),
        apart_(apart) {}
  // Packs the node's constant W and R into the slices, releasing each ONNX copy once packed
  // (CompileContext::release_input_now): R for every slice, then W, so that loading holds one
  // of them twice at most, not both (rnnt_step's LSTM of 640 units: W 3.3 MB, R 6.6 MB).
  void init(CompileContext& ctx);
  Status run(KernelContext& ctx) const override;
  // Direction d's W (layer) or R from the slices, as OnnxWeightsSource writes it: they hold
  // every element of both (the columns are copies, not sums).
  void onnx_weights(int64_t d, bool layer, std::span<const int64_t> row_at, int64_t k_stride,
                    float* dst) const;

 private:
  bool lstm() const { return spec_.cell == RnnCell::kLstm; }
  bool gru() const { return spec_.cell == RnnCell::kGru; }
  bool reverse(int d) const { return spec_.direction == RnnDirection::kReverse || d == 1; }
  // Steps whose X.W + bias a slice computes at once, before their recurrent steps: reading W's
  // columns evicts R's from the core's cache, so the fewer times the better (an LSTM of 512
  // units on 2 threads took 59 us a step in blocks of 16), within 4 MiB a slice of 1024 units.
  // Fewer where the block would pass 8 MiB a slice (8 rows of an LSTM of 2048 units: 64 steps),
  // where R is read from memory anyway.
  static constexpr int64_t kXwSteps = 256;
  int64_t xw_steps(int64_t rows) const {
    return std::clamp<int64_t>((int64_t{8} << 20) / (4 * rows * max_gx_), 16, kXwSteps);
  }
  // The steps of a run's blocks: xw_steps, or fewer where the longest row is shorter. A
  // streaming model's step is one (dfn_gru's GRU of 256 units over 8 rows leased 6.4 MB for
  // 256 steps' X.W, of which one was used).
  int64_t xw_block(const Io& io) const {
    return std::clamp<int64_t>(io.len(io.order[0]), 1, xw_steps(io.N));
  }
  // A slice's scratch for `rows` rows and blocks of `block` steps: their gates, the GRU's h
  // gates, and a block's X.W + bias.
  int64_t slice_floats(int64_t rows, int64_t block) const { return (2 + block) * rows * max_gx_; }
  SliceColumns columns_of(int64_t j0, int64_t j1) const;
  // Slice [j0, j1) of direction d: its columns of R, its GRU h-gate bias and its peepholes.
  // `discard`: R's pages go back to the kernel as they are read (pack_columns), where it dies
  // when released and each direction is one slice, which reads its rows once and in order.
  Slice pack_recurrent(const Tensor& r, const Tensor* b, const Tensor* p, int64_t d, int64_t j0,
                       int64_t j1, bool discard) const;
  // The slice's columns of W and its bias (X.W's); `discard` as pack_recurrent's.
  void pack_input(const Tensor& w, const Tensor* b, int64_t d, bool discard, Slice& sl) const;
  // Direction d of the run's rows, longest first (`order`), on `threads` threads. Scratch: h
  // before and after a step, c and r.h of every row, then each slice's slice_floats.
  Status run_direction(const KernelContext& ctx, const Io& io, int d, int threads,
                       float* scratch) const;
  // A slice's X.W + bias of the live rows of steps [t0, t1): [step][row][gx].
  void project(const Walk& w, const Slice& sl, float* xw) const;
  // Slice i's part of step t for the live rows: phase 0 all of it, but for a GRU without
  // linear_before_reset, whose h product (phase 1) needs r.h of every unit.
  void step_slice(const Walk& w, const Step& st, size_t i, int phase) const;

  const Node& node_;
  RnnSpec spec_;
  bool general_;  // general_cell_math: gates clipped and activated one at a time
  Threads team_;
  // Two directions at once, a thread each, each of one slice (directions_apart).
  bool apart_ = false;
  int64_t I_ = 0, H_ = 0, Hp_ = 0, max_gx_ = 0;
  small::WeightShapes shapes_;
  std::vector<std::vector<Slice>> slices_;  // [D][slices]
  mutable ScratchPool scratch_;
  mutable StallGuard stall_guard_;
};

RECUR_LOAD_PATH SliceColumns RowTeamKernel::columns_of(int64_t j0, int64_t j1) const {
  const int64_t H = H_, hs = j1 - j0;
  // Columns of gates [first, first + n) of the slice's units, `width` of them (padded with -1).
  auto gates = [&](int64_t first, int64_t n, int64_t width) {
    std::vector<int64_t> src(static_cast<size_t>(width), -1);
    for (int64_t g = 0; g < n; ++g)
      for (int64_t u = 0; u < hs; ++u)
        src[static_cast<size_t>(g * hs + u)] = (first + g) * H + j0 + u;
    return src;
  };
  SliceColumns c;
  if (!gru()) {  // an LSTM's four gates or a vanilla RNN's one
    const int64_t n = lstm() ? 4 : 1;
    c.g1 = round_up(n * hs, kLanes);
    c.x = c.r1 = gates(0, n, c.g1);
    return c;
  }
  c.g1 = round_up(2 * hs, kLanes);
  c.g2 = round_up(hs, kLanes);
  c.r1 = gates(0, 2, c.g1);
  c.r2 = gates(2, 1, c.g2);
  c.x = c.r1;
  c.x.insert(c.x.end(), c.r2.begin(), c.r2.end());
  return c;
}

RECUR_LOAD_PATH Slice RowTeamKernel::pack_recurrent(const Tensor& r, const Tensor* b,
                                                    const Tensor* p, int64_t d, int64_t j0,
                                                    int64_t j1, bool discard) const {
  const int64_t H = H_, G = spec_.num_gates() * H;
  Slice sl;
  sl.j0 = j0;
  sl.j1 = j1;
  const int64_t hs = sl.hs();
  const SliceColumns cols = columns_of(j0, j1);
  sl.g1 = cols.g1;
  sl.g2 = cols.g2;
  const float* rd = r.data<float>() + d * G * H;
  const float* bd = b ? b->data<float>() + d * 2 * G : nullptr;
  sl.r1 = pack_columns(rd, H, cols.r1, H, 1, discard);
  if (gru()) {
    sl.r2 = pack_columns(rd, H, cols.r2, H, 1, discard);
    sl.rbh = small::zeros(sl.g2);
    if (bd && spec_.linear_before_reset)
      for (int64_t u = 0; u < hs; ++u)
        static_cast<float*>(sl.rbh->data)[u] = bd[G + 2 * H + j0 + u];
  }
  if (p) {
    const float* pd = p->data<float>() + d * 3 * H;
    for (int64_t g = 0; g < 3; ++g) sl.peep.insert(sl.peep.end(), pd + g * H + j0, pd + g * H + j1);
  }
  return sl;
}

RECUR_LOAD_PATH void RowTeamKernel::pack_input(const Tensor& w, const Tensor* b, int64_t d,
                                               bool discard, Slice& sl) const {
  const int64_t H = H_, G = spec_.num_gates() * H;
  const std::vector<int64_t> xs = columns_of(sl.j0, sl.j1).x;
  const float* bd = b ? b->data<float>() + d * 2 * G : nullptr;
  sl.w = pack_columns(w.data<float>() + d * G * I_, I_, xs, I_, 1, discard);
  sl.bias = small::zeros(sl.gx());
  float* bias = static_cast<float*>(sl.bias->data);
  for (size_t c = 0; bd && c < xs.size(); ++c) {
    const int64_t s = xs[c];
    if (s < 0) continue;
    // A GRU's h takes R's bias in its recurrent product with linear_before_reset (rbh).
    const bool rb = !gru() || s < 2 * H || !spec_.linear_before_reset;
    bias[c] = bd[s] + (rb ? bd[G + s] : 0.0f);
  }
}

RECUR_LOAD_PATH void RowTeamKernel::init(CompileContext& ctx) {
  // row_team_declined has seen W and R constant, float32 and of rank 3.
  const Tensor* b = ctx.constant_input(kRnnB);
  const Tensor* p = ctx.constant_input(kRnnP);
  {
    const Tensor& w = *ctx.constant_input(kRnnW);
    const Tensor& r = *ctx.constant_input(kRnnR);
    I_ = w.dim(2);
    H_ = r.dim(2);
    shapes_.keep(w, r, b, p);
  }
  Hp_ = round_up(H_, kLanes);
  // A slice a thread, of whole vectors of units but the last.
  const int64_t n =
      apart_ ? 1 : std::clamp<int64_t>(team_.max, 1, std::max<int64_t>(1, H_ / kLanes));
  const bool discard_r = n == 1 && ctx.input_dies_on_release(kRnnR);
  for (int64_t d = 0; d < spec_.num_directions(); ++d) {
    std::vector<Slice>& dir = slices_.emplace_back();
    for (int64_t s = 0; s < n; ++s) {
      dir.push_back(pack_recurrent(
          *ctx.constant_input(kRnnR), b, p, d, s == 0 ? 0 : round_up(H_ * s / n, kLanes),
          s + 1 == n ? H_ : round_up(H_ * (s + 1) / n, kLanes), discard_r));
      max_gx_ = std::max(max_gx_, dir.back().gx());
    }
  }
  ctx.release_input_now(kRnnR);
  const bool discard_w = n == 1 && ctx.input_dies_on_release(kRnnW);
  for (int64_t d = 0; d < spec_.num_directions(); ++d)
    for (Slice& sl : slices_[static_cast<size_t>(d)])
      pack_input(*ctx.constant_input(kRnnW), b, d, discard_w, sl);
  ctx.release_input_now(kRnnW);
}

RECUR_LOAD_PATH void RowTeamKernel::onnx_weights(int64_t d, bool layer,
                                                 std::span<const int64_t> row_at, int64_t k_stride,
                                                 float* dst) const {
  for (const Slice& sl : slices_[static_cast<size_t>(d)]) {
    const SliceColumns cols = columns_of(sl.j0, sl.j1);
    auto unpack = [&](const AlignedBuffer& m, const std::vector<int64_t>& source, int64_t K) {
      unpack_columns(static_cast<const float*>(m.data), K, source, row_at, k_stride, dst);
    };
    if (layer) {
      unpack(*sl.w, cols.x, I_);
      continue;
    }
    unpack(*sl.r1, cols.r1, H_);
    if (gru()) unpack(*sl.r2, cols.r2, H_);
  }
}

Status RowTeamKernel::run(KernelContext& ctx) const {
  Io io;
  RECUR_RETURN_IF_ERROR(small::begin_run(ctx, node_, spec_, shapes_, I_, H_, io));
  if (io.N == 0) return ok_status();
  if (io.N > kRowTeamMaxRows)
    return ctx.error(ErrorCode::kInternal,
                     "the row-team kernel runs up to " + std::to_string(kRowTeamMaxRows) + " rows");
  // The rows by decreasing length, ties in row order: each step's live rows are a prefix.
  std::array<int64_t, kRowTeamMaxRows> order{};
  for (int64_t n = 0; n < io.N; ++n) order[static_cast<size_t>(n)] = n;
  // std::sort, unlike stable_sort, takes no buffer: ties go by row index instead.
  std::sort(order.begin(), order.begin() + io.N, [&](int64_t a, int64_t b) {
    return io.len(a) > io.len(b) || (io.len(a) == io.len(b) && a < b);
  });
  io.order = order.data();
  // Rows of length 0 have no steps: zeros for their final states.
  for (int64_t n = 0; n < io.N; ++n) {
    for (float* out : {io.yh, io.yc}) {
      if (!out || io.len(n) > 0) continue;
      for (int64_t d = 0; d < io.D; ++d)
        std::fill(out + io.s_off(d, n), out + io.s_off(d, n) + H_, 0.0f);
    }
  }
  CoreLease lease(team_.max, team_.shrink);
  if (lease.threads() < team_.max) count_smaller_team_run();
  const int64_t floats =
      4 * io.N * Hp_ + static_cast<int64_t>(slices_[0].size()) * slice_floats(io.N, xw_block(io));
  const bool apart = apart_ && io.D == 2 && lease.threads() >= 2;
  ScratchPool::Lease buf =
      scratch_.acquire(static_cast<size_t>(apart ? 2 * floats : floats) * sizeof(float));
  auto* scratch = static_cast<float*>(buf.data());
  if (apart) {
    // A direction a thread, each with scratch of its own; no step waits for the other.
    std::array<Status, 2> st;
    auto one = [&](size_t d) {
      st[d] = run_direction(ctx, io, static_cast<int>(d), 1, scratch + d * floats);
    };
    run_jobs(2, 1, [f = &one](size_t d) { (*f)(d); });
    RECUR_RETURN_IF_ERROR(st[0]);
    return st[1];
  }
  for (int d = 0; d < io.D; ++d)
    RECUR_RETURN_IF_ERROR(run_direction(ctx, io, d, apart_ ? 1 : lease.threads(), scratch));
  return ok_status();
}

Status RowTeamKernel::run_direction(const KernelContext& ctx, const Io& io, int d, int threads,
                                    float* scratch) const {
  const int64_t H = H_, N = io.N;
  Walk w(io, d, reverse(d));
  w.block = xw_block(io);
  // Row q (in length order) at [q * Hp_]: h before and after a step, c, r.h of every unit.
  w.h[0] = scratch;
  w.h[1] = scratch + N * Hp_;
  w.c = scratch + 2 * N * Hp_;
  w.rh_all = scratch + 3 * N * Hp_;  // a GRU without linear_before_reset
  w.per_slice = scratch + 4 * N * Hp_;
  const size_t bytes = static_cast<size_t>(H) * sizeof(float);
  for (int64_t q = 0; q < N; ++q) {
    const int64_t so = io.s_off(d, io.order[q]);
    float* h = w.h[0] + q * Hp_;
    float* c = w.c + q * Hp_;
    if (io.h0)
      std::memcpy(h, io.h0 + so, bytes);
    else
      std::fill(h, h + H, 0.0f);
    if (io.c0 && lstm())
      std::memcpy(c, io.c0 + so, bytes);
    else
      std::fill(c, c + H, 0.0f);
  }
  const size_t n = slices_[static_cast<size_t>(d)].size();
  const int phases = gru() && !spec_.linear_before_reset ? 2 : 1;
  const int64_t steps = w.len(0);
  // A run that may be cancelled looks at every step (an atomic load and a clock read): a step
  // of an LSTM of 1024 units takes 0.6 ms on one thread, a block of 256 of them 160 ms.
  const bool fine = ctx.fine_grained_cancel();
  // A team meets at every step, so a burst of another process on one of its cores stalls it a
  // time slice a step, too short to show in busy_cores.h's window (an LSTM of 256 units over
  // 1000 steps ran past 1 s under `ctest -j2`, against 6 ms quiet): each block of steps is
  // judged as run_shared_blocks judges its blocks (stall_guard.h), and a stalled pass goes on
  // on the calling thread alone.
  if (threads > 1 && stall_guard_.paused(steady_ns())) threads = 1;
  auto step_at = [&](int64_t t) {
    return Step{t, w.live_at(t), w.cur ^ static_cast<int>((t - w.t0) & 1)};
  };
  for (w.t0 = 0; w.t0 < steps; w.t0 = w.t1) {
    w.t1 = std::min(steps, w.t0 + w.block);
    const int64_t started = threads > 1 ? steady_ns() : 0;
    const int64_t rows = w.live_at(w.t0);
    if (threads > 1 && !fine) {
      // The block's steps (and phases) as rounds of one parallel region; a run that may be
      // cancelled keeps a region a step, so that it can stop between any two.
      auto round = [&](int64_t r, size_t i) {
        step_slice(w, step_at(w.t0 + r / phases), i, static_cast<int>(r % phases));
      };
      // One pointer of capture: the std::function holds it without allocating.
      run_rounds((w.t1 - w.t0) * phases, n, threads - 1,
                 [f = &round](int64_t r, size_t i) { (*f)(r, i); });
    } else {
      for (int64_t t = w.t0; t < w.t1; ++t) {
        if (fine) RECUR_RETURN_IF_ERROR(ctx.check_cancelled("time step", t));
        const Step st = step_at(t);
        for (int phase = 0; phase < phases; ++phase) {
          auto one = [&](size_t i) { step_slice(w, st, i, phase); };
          if (threads > 1) {
            run_jobs(n, threads - 1, [f = &one](size_t i) { (*f)(i); });
          } else {
            for (size_t i = 0; i < n; ++i) one(i);
          }
        }
      }
    }
    w.cur ^= static_cast<int>((w.t1 - w.t0) & 1);
    if (threads > 1) {
      const int64_t now = steady_ns();
      if (stall_guard_.record(rows, w.t1 - w.t0, now - started, now)) threads = 1;
    }
  }
  return ok_status();
}

void RowTeamKernel::project(const Walk& w, const Slice& sl, float* xw) const {
  std::array<const float*, kRowSet> init{}, in{};
  std::array<float*, kRowSet> out{};
  int64_t nr = 0;
  auto flush = [&] {
    if (nr > 0)
      multiply_row_set(nr, init.data(), in.data(), I_, static_cast<const float*>(sl.w->data),
                       sl.gx(), out.data());
    nr = 0;
  };
  for (int64_t u = w.t0; u < w.t1; ++u) {
    for (int64_t q = 0, a = w.live_at(u); q < a; ++q) {
      init[static_cast<size_t>(nr)] = static_cast<const float*>(sl.bias->data);
      in[static_cast<size_t>(nr)] = w.io.x_at(w.step_of(u, q), w.io.order[q]);
      out[static_cast<size_t>(nr)] = xw + ((u - w.t0) * w.io.N + q) * sl.gx();
      if (++nr == kRowSet) flush();
    }
  }
  flush();
}

void RowTeamKernel::step_slice(const Walk& w, const Step& st, size_t i, int phase) const {
  const Slice& sl = slices_[static_cast<size_t>(w.d)][i];
  const Io& io = w.io;
  const bool gru = this->gru(), lbr = spec_.linear_before_reset;
  const int64_t N = io.N, H = H_, t = st.t;
  float* g = w.per_slice + static_cast<int64_t>(i) * slice_floats(N, w.block);
  float* gh = g + N * max_gx_;
  float* xw = gh + N * max_gx_;
  const int64_t hs = sl.hs(), gx = sl.gx();
  const int n = static_cast<int>(st.live);
  const float* hp = w.h[st.cur];
  auto xw_row = [&](int64_t q) { return xw + ((t - w.t0) * N + q) * gx; };
  std::array<const float*, kRowTeamMaxRows> init{}, in{};
  std::array<float*, kRowTeamMaxRows> out{};
  // Every other step takes the column blocks of R last to first. A slice larger than the core's
  // L2 is then read from L3 only in part: the blocks a step read last are still in L2 when the
  // next step starts with them, where the same order every step had LRU evict each block just
  // before it was needed again (LSTM of 640 units, one row, two threads: 11.9 -> 7.4 ms).
  const bool back = (t & 1) != 0;
  const small::CellMath math = small::cell_math(spec_, general_, w.d);
  // X.W + bias + h.R over r1's columns [c0, c1) (c0 at a 64-column block, c1 at one or r1's
  // end), then the GRU's gates there activated, and with `rh` r.h of the slice's units (phase 0
  // of a GRU without linear_before_reset: phase 1 reads it).
  auto gates_product = [&](int64_t c0, int64_t c1, bool rh) {
    for (int q = 0; q < n; ++q) {
      init[static_cast<size_t>(q)] = xw_row(q) + c0;
      in[static_cast<size_t>(q)] = hp + q * Hp_;
      out[static_cast<size_t>(q)] = g + q * gx + c0;
    }
    multiply_row_set(n, init.data(), in.data(), H, static_cast<const float*>(sl.r1->data) + c0 * H,
                     c1 - c0, out.data(), back);
    if (!gru) return;
    const int64_t a1 = std::min<int64_t>(c1, 2 * hs);  // z is [0, hs), r [hs, 2 hs)
    for (int q = 0; q < n; ++q) {
      if (a1 > c0) small::gru_gates(math, g + q * gx + c0, a1 - c0);
      if (rh)
        small::scale_rows(g + q * gx + hs, hp + q * Hp_ + sl.j0, hs, w.rh_all + q * Hp_ + sl.j0);
    }
  };
  // A GRU's gh = R's bias of h + h.Rh (linear_before_reset), or X.Wh + bias + (r.h).Rh.
  auto h_product = [&] {
    for (int q = 0; q < n; ++q) {
      init[static_cast<size_t>(q)] =
          lbr ? static_cast<const float*>(sl.rbh->data) : xw_row(q) + sl.g1;
      in[static_cast<size_t>(q)] = (lbr ? hp : w.rh_all) + q * Hp_;
      out[static_cast<size_t>(q)] = gh + q * gx;
    }
    multiply_row_set(n, init.data(), in.data(), H, static_cast<const float*>(sl.r2->data), sl.g2,
                     out.data(), back);
  };
  // Without linear_before_reset h's product waits for r.h of every unit, so the backward steps
  // cannot take it first; they take z's blocks last instead (r's, the barrier, h's, z's: the
  // reverse of the forward steps' z, r, barrier, h but for r's place). A block that holds the
  // end of z and the start of r is taken in both halves. GRU of 768 units, one row, two
  // threads: 12.6 -> 11.2 ms; one thread GRU 512 8.86 -> 8.09.
  const int64_t r_from = hs / kBlockCols * kBlockCols;             // r's first block
  const int64_t z_to = std::min(sl.g1, round_up(hs, kBlockCols));  // past z's last block
  const bool z_last = gru && !lbr && back;
  if (phase == 1) {
    h_product();  // a GRU without linear_before_reset, r.h of every unit in w.rh_all
    if (z_last) gates_product(0, z_to, false);
  } else {
    if (t == w.t0) project(w, sl, xw);
    // With linear_before_reset gh reads only h: on the steps that go backward it goes first,
    // so that the whole step reads the slice's R in the reverse of the step before.
    const bool h_first = gru && lbr && back;
    if (h_first) h_product();
    gates_product(z_last ? r_from : 0, sl.g1, gru && !lbr);
    if (gru && !lbr) return;  // phase 1 follows once every slice has its r.h
    if (gru && !h_first) h_product();
  }
  const size_t part = static_cast<size_t>(hs) * sizeof(float);
  for (int q = 0; q < n; ++q) {
    float* hn = w.h[1 - st.cur] + q * Hp_ + sl.j0;
    float* cq = w.c + q * Hp_ + sl.j0;
    float* gq = g + q * gx;
    const float* xh = gru && lbr ? xw_row(q) + sl.g1 : nullptr;
    const float* peep = sl.peep.empty() ? nullptr : sl.peep.data();
    if (gru) {
      std::memcpy(hn, hp + q * Hp_ + sl.j0, part);
      small::gru_update(math, gq, gq + hs, gh + q * gx, xh, hs, hn);
    } else if (lstm()) {
      small::lstm_cell_update(math, gq, hs, peep, spec_.input_forget, cq, hn);
    } else {
      small::rnn_activate(math, gq, hs, hn);
    }
    const int64_t row = io.order[q];
    std::memcpy(io.y + io.y_off(w.step_of(t, q), w.d, row) + sl.j0, hn, part);
    if (t + 1 < w.len(q)) continue;  // the row's last step: its final states
    const int64_t so = io.s_off(w.d, row) + sl.j0;
    if (io.yh) std::memcpy(io.yh + so, hn, part);
    if (io.yc && lstm()) std::memcpy(io.yc + so, cq, part);
  }
}

}  // namespace

RECUR_LOAD_PATH std::string row_team_declined(const CompileContext& ctx, const RnnSpec& spec,
                                              const OnednnOptions& o) {
  // The small-cell kernels' conditions, with any size of cell: for a cell of the general path
  // (general_cell_math), which only recur's kernels run, those of its weights and the CPU.
  std::string why = general_cell_math(spec) ? small_kernel_declined(ctx.node(), ctx.graph(), spec)
                                            : small_rnn_declined(ctx, spec, o, false, true);
  if (!why.empty()) return why;
  const int64_t H = ctx.constant_input(kRnnR)->dim(2);
  if (H < kRowTeamMinHidden || H > kRowTeamMaxHidden) return "hidden size outside the team's range";
  return "";
}

// Below 384 units on two threads a direction a thread, each with all of its R (1 MiB for an
// LSTM of 256 units), ran faster than both threads on each direction's slices, and faster than
// oneDNN's primitive (which also runs a direction a thread there): one row, 100 steps, p50 ms,
// apart / slices / primitive, alternated with the primitive: LSTM 256 1.22 / 1.49 / 1.33-1.36,
// GRU 256 0.83 / 1.19 / 1.05-1.08, LSTM 320 2.30 / 2.30 / 2.84-2.99, LSTM 192 0.67 / 0.63 /
// 0.75-0.83; from 384 units the slices (LSTM 384 3.95 / 3.23 / 5.48-6.70, GRU 384 2.37 / 2.50
// / 3.02-3.52, LSTM 512 11.0 / 7.19 / 15.5-16.5). Past two threads the slices share the work
// among them all.
RECUR_LOAD_PATH bool directions_apart(const RnnSpec& spec, int64_t H, int threads,
                                      int64_t l2_bytes) {
  if (spec.num_directions() != 2 || threads != 2) return false;
  if (H < 384) return true;
  const double r_bytes = 4.0 * static_cast<double>(spec.num_gates() * H) * static_cast<double>(H);
  return small_l2(l2_bytes) && r_bytes <= 8.0 * static_cast<double>(l2_bytes);
}

RECUR_LOAD_PATH RowTeam create_row_team_kernel(CompileContext& ctx, const RnnSpec& spec,
                                               const OnednnOptions& o) {
  const int64_t H = ctx.constant_input(kRnnR)->dim(2);
  RowTeam team;
  const int64_t l2 = core_l2_bytes();
  team.apart = directions_apart(spec, H, o.max_threads, l2);
  // Directions apart: a thread's slice is all of a direction's R, as on one thread.
  team.max_rows = row_team_rows(spec.cell, H, team.apart ? 1 : o.max_threads, l2);
  team.max_rows = few_rows_here(team.max_rows);
  auto k = std::make_shared<RowTeamKernel>(ctx.node(), spec, o.team(), team.apart);
  team.w_shape = ctx.constant_input(kRnnW)->shape();
  team.r_shape = ctx.constant_input(kRnnR)->shape();
  k->init(ctx);
  team.weights = [k](int64_t d, bool layer, std::span<const int64_t> row_at, int64_t k_stride,
                     float* dst) { k->onnx_weights(d, layer, row_at, k_stride, dst); };
  team.kernel = std::move(k);
  return team;
}

}  // namespace recur::onednn
