// The row-team LSTM and GRU (row_team.h): one row, the units in a slice a thread.
#include "providers/onednn/rnn/row_team.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/rnn/small_cell.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

namespace {

using namespace avx512;  // NOLINT: the loops are written in its terms
using small::Io;
using small::round_up;

// Units [j0, j1) of one direction, hs = j1 - j0 of them, and the columns of their gates packed
// as [K][width] (pack_columns), each gate hs wide so that the cell updates of small_cell.h take
// the slice as a cell of hs units:
// - LSTM: X.W + bias and h.R over i, o, f, c (g1 = gx, 4 hs rounded up to whole vectors);
// - GRU: X.W + bias over z, r (g1, 2 hs rounded up) and then h (g2, hs rounded up); h.R over
//   z, r (r1) and over h (r2), rbh R's bias of h with linear_before_reset (added before r
//   scales it) and zeros without.
struct Slice {
  int64_t j0 = 0, j1 = 0, g1 = 0, g2 = 0;
  std::unique_ptr<AlignedBuffer> w, r1, r2, bias, rbh;
  std::vector<float> peep;  // LSTM: i, o, f (3 hs); empty without P
  int64_t hs() const { return j1 - j0; }
  int64_t gx() const { return g1 + g2; }
};

std::unique_ptr<AlignedBuffer> floats(int64_t n) {
  auto buf = std::make_unique<AlignedBuffer>(static_cast<size_t>(n) * sizeof(float));
  std::fill(static_cast<float*>(buf->data), static_cast<float*>(buf->data) + n, 0.0f);
  return buf;
}

class RowTeamKernel final : public Kernel {
 public:
  RowTeamKernel(const Node& node, RnnSpec spec, Threads team)
      : node_(node), spec_(std::move(spec)), team_(team) {}
  void init(const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p);
  Status run(KernelContext& ctx) const override;

 private:
  bool lstm() const { return spec_.cell == RnnCell::kLstm; }
  bool reverse(int d) const { return spec_.direction == RnnDirection::kReverse || d == 1; }
  // Steps whose X.W + bias a slice computes at once, before their recurrent steps: reading W's
  // columns evicts R's from the core's cache, so the fewer times the better (an LSTM of 512
  // units on 2 threads took 59 us a step in blocks of 16), within 4 MiB a slice of 1024 units.
  static constexpr int64_t kXwSteps = 256;
  // A slice's scratch: its gates, r.h (GRU), and a block's X.W + bias.
  int64_t slice_floats() const { return 3 * max_gx_ + kXwSteps * max_gx_; }
  Slice pack_slice(const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p, int64_t d,
                   int64_t j0, int64_t j1) const;
  // Direction d of the one row over its `len` steps on `threads` threads (scratch: h before
  // and after a step, c, r.h of the whole row, then each slice's slice_floats).
  Status run_direction(const KernelContext& ctx, const Io& io, int d, int64_t len, int threads,
                       float* scratch) const;

  const Node& node_;
  RnnSpec spec_;
  Threads team_;
  int64_t I_ = 0, H_ = 0, Hp_ = 0, max_gx_ = 0;
  small::WeightShapes shapes_;
  std::vector<std::vector<Slice>> slices_;  // [D][slices]
  mutable ScratchPool scratch_;
};

RECUR_LOAD_PATH Slice RowTeamKernel::pack_slice(const Tensor& w, const Tensor& r, const Tensor* b,
                                                const Tensor* p, int64_t d, int64_t j0,
                                                int64_t j1) const {
  const int64_t H = H_, G = spec_.num_gates() * H;
  Slice sl;
  sl.j0 = j0;
  sl.j1 = j1;
  const int64_t hs = sl.hs();
  // Columns of gates [first, first + n) of the slice's units, `width` of them (padded with -1).
  auto gates = [&](int64_t first, int64_t n, int64_t width) {
    std::vector<int64_t> src(static_cast<size_t>(width), -1);
    for (int64_t g = 0; g < n; ++g)
      for (int64_t u = 0; u < hs; ++u)
        src[static_cast<size_t>(g * hs + u)] = (first + g) * H + j0 + u;
    return src;
  };
  const float* wd = w.data<float>() + d * G * I_;
  const float* rd = r.data<float>() + d * G * H;
  const float* bd = b ? b->data<float>() + d * 2 * G : nullptr;
  std::vector<int64_t> xs;
  if (lstm()) {
    sl.g1 = round_up(4 * hs, kLanes);
    xs = gates(0, 4, sl.g1);
    sl.r1 = pack_columns(rd, H, xs, H, 1);
  } else {
    sl.g1 = round_up(2 * hs, kLanes);
    sl.g2 = round_up(hs, kLanes);
    const std::vector<int64_t> zr = gates(0, 2, sl.g1), h = gates(2, 1, sl.g2);
    sl.r1 = pack_columns(rd, H, zr, H, 1);
    sl.r2 = pack_columns(rd, H, h, H, 1);
    xs = zr;
    xs.insert(xs.end(), h.begin(), h.end());
    sl.rbh = floats(sl.g2);
    if (bd && spec_.linear_before_reset)
      for (int64_t u = 0; u < hs; ++u)
        static_cast<float*>(sl.rbh->data)[u] = bd[G + 2 * H + j0 + u];
  }
  sl.w = pack_columns(wd, I_, xs, I_, 1);
  sl.bias = floats(sl.gx());
  float* bias = static_cast<float*>(sl.bias->data);
  for (size_t c = 0; bd && c < xs.size(); ++c) {
    const int64_t s = xs[c];
    if (s < 0) continue;
    // A GRU's h takes R's bias in its recurrent product with linear_before_reset (rbh).
    const bool rb = lstm() || s < 2 * H || !spec_.linear_before_reset;
    bias[c] = bd[s] + (rb ? bd[G + s] : 0.0f);
  }
  if (p) {
    const float* pd = p->data<float>() + d * 3 * H;
    for (int64_t g = 0; g < 3; ++g) sl.peep.insert(sl.peep.end(), pd + g * H + j0, pd + g * H + j1);
  }
  return sl;
}

RECUR_LOAD_PATH void RowTeamKernel::init(const Tensor& w, const Tensor& r, const Tensor* b,
                                         const Tensor* p) {
  I_ = w.dim(2);
  H_ = r.dim(2);
  Hp_ = round_up(H_, kLanes);
  shapes_.keep(w, r, b, p);
  // A slice a thread, of whole vectors of units but the last.
  const int64_t n = std::clamp<int64_t>(team_.max, 1, std::max<int64_t>(1, H_ / kLanes));
  for (int64_t d = 0; d < spec_.num_directions(); ++d) {
    std::vector<Slice>& dir = slices_.emplace_back();
    for (int64_t s = 0; s < n; ++s) {
      dir.push_back(pack_slice(w, r, b, p, d, s == 0 ? 0 : round_up(H_ * s / n, kLanes),
                               s + 1 == n ? H_ : round_up(H_ * (s + 1) / n, kLanes)));
      max_gx_ = std::max(max_gx_, dir.back().gx());
    }
  }
}

Status RowTeamKernel::run(KernelContext& ctx) const {
  Io io;
  RECUR_RETURN_IF_ERROR(small::begin_run(ctx, node_, spec_, shapes_, I_, H_, io));
  if (io.N == 0) return ok_status();
  if (io.N != 1) return ctx.error(ErrorCode::kInternal, "the row-team kernel runs one row");
  CoreLease lease(team_.max, team_.shrink);
  if (lease.threads() < team_.max) count_smaller_team_run();
  const int64_t floats = 4 * Hp_ + static_cast<int64_t>(slices_[0].size()) * slice_floats();
  ScratchPool::Lease buf = scratch_.acquire(static_cast<size_t>(floats) * sizeof(float));
  for (int d = 0; d < io.D; ++d)
    RECUR_RETURN_IF_ERROR(
        run_direction(ctx, io, d, io.len(0), lease.threads(), static_cast<float*>(buf.data())));
  return ok_status();
}

Status RowTeamKernel::run_direction(const KernelContext& ctx, const Io& io, int d, int64_t len,
                                    int threads, float* scratch) const {
  const std::vector<Slice>& slices = slices_[static_cast<size_t>(d)];
  const bool rev = reverse(d), gru = !lstm(), lbr = spec_.linear_before_reset;
  const int64_t H = H_, so = io.s_off(d, 0);
  float* h[2] = {scratch, scratch + Hp_};
  float* c = scratch + 2 * Hp_;
  float* rh_row = scratch + 3 * Hp_;  // GRU without linear_before_reset: r.h of every unit
  float* per_slice = scratch + 4 * Hp_;
  const size_t bytes = static_cast<size_t>(H) * sizeof(float);
  if (io.h0)
    std::memcpy(h[0], io.h0 + so, bytes);
  else
    std::fill(h[0], h[0] + H, 0.0f);
  if (io.c0 && !gru)
    std::memcpy(c, io.c0 + so, bytes);
  else
    std::fill(c, c + H, 0.0f);
  int cur = 0;
  int64_t t = 0, t0 = 0, t1 = 0;
  auto step_of = [&](int64_t u) { return rev ? len - 1 - u : u; };
  // Slice i's X.W + bias of steps [t0, t1), four steps a pass.
  auto project = [&](const Slice& sl, float* xw) {
    for (int64_t u = t0; u < t1; u += kRowBlock) {
      const int nr = static_cast<int>(std::min<int64_t>(kRowBlock, t1 - u));
      std::array<const float*, kRowBlock> init{}, in{};
      std::array<float*, kRowBlock> out{};
      for (int q = 0; q < nr; ++q) {
        init[static_cast<size_t>(q)] = static_cast<const float*>(sl.bias->data);
        in[static_cast<size_t>(q)] = io.x_at(step_of(u + q), 0);
        out[static_cast<size_t>(q)] = xw + (u + q - t0) * sl.gx();
      }
      multiply_rows(nr, init.data(), in.data(), I_, static_cast<const float*>(sl.w->data), sl.gx(),
                    out.data());
    }
  };
  // The first part of a step, or all of it but for a GRU without linear_before_reset, whose
  // second part (phase 1) needs r.h of every unit.
  auto job = [&](size_t i, int phase) {
    const Slice& sl = slices[i];
    float* g = per_slice + static_cast<int64_t>(i) * slice_floats();
    float* gh = g + max_gx_;
    float* xw = gh + 2 * max_gx_;
    const float* row = xw + (t - t0) * sl.gx();
    const float* hp = h[cur];
    const int64_t hs = sl.hs();
    float* hn = h[1 - cur] + sl.j0;
    if (phase == 0) {
      if (t == t0) project(sl, xw);
      multiply_rows(1, &row, &hp, H, static_cast<const float*>(sl.r1->data), sl.g1, &g);
      if (!gru) {
        small::lstm_cell_update(g, hs, sl.peep.empty() ? nullptr : sl.peep.data(),
                                spec_.input_forget, c + sl.j0, hn);
      } else {
        small::sigmoid_rows(g, 2 * hs);
        if (!lbr) {
          small::scale_rows(g + hs, hp + sl.j0, hs, rh_row + sl.j0);
          return;
        }
      }
    }
    if (gru) {
      // gh = R's bias of h + h.Rh (linear_before_reset), or X.Wh + bias + (r.h).Rh.
      const float* init = lbr ? static_cast<const float*>(sl.rbh->data) : row + sl.g1;
      const float* in = lbr ? hp : rh_row;
      multiply_rows(1, &init, &in, H, static_cast<const float*>(sl.r2->data), sl.g2, &gh);
      std::memcpy(hn, hp + sl.j0, static_cast<size_t>(hs) * sizeof(float));
      small::gru_update(g, g + hs, gh, lbr ? row + sl.g1 : nullptr, hs, hn);
    }
    std::memcpy(io.y + io.y_off(step_of(t), d, 0) + sl.j0, hn,
                static_cast<size_t>(hs) * sizeof(float));
  };
  const size_t n = slices.size();
  const int phases = gru && !lbr ? 2 : 1;
  for (t0 = 0; t0 < len; t0 = t1) {
    if (ctx.fine_grained_cancel()) RECUR_RETURN_IF_ERROR(ctx.check_cancelled("time step", t0));
    t1 = std::min(len, t0 + kXwSteps);
    for (t = t0; t < t1; ++t) {
      for (int phase = 0; phase < phases; ++phase) {
        auto one = [&](size_t i) { job(i, phase); };
        if (threads > 1) {
          // One pointer of capture: the std::function holds it without allocating.
          run_jobs(n, threads - 1, [f = &one](size_t i) { (*f)(i); });
        } else {
          for (size_t i = 0; i < n; ++i) one(i);
        }
      }
      cur = 1 - cur;
    }
  }
  for (auto [out, src] : {std::pair{io.yh, h[cur]}, std::pair{gru ? nullptr : io.yc, c}}) {
    if (!out) continue;
    if (len == 0)
      std::fill(out + so, out + so + H, 0.0f);
    else
      std::memcpy(out + so, src, bytes);
  }
  return ok_status();
}

}  // namespace

RECUR_LOAD_PATH std::string row_team_declined(const CompileContext& ctx, const RnnSpec& spec,
                                              const OnednnOptions& o) {
  if (spec.cell == RnnCell::kRnn) return "a vanilla RNN";
  if (o.max_threads < 2) return "one thread";
  // The small-cell kernels' conditions (float32, no clip, default activations, constant
  // float32 weights, AVX-512), with any size of cell.
  std::string why = small_rnn_declined(ctx, spec, o, false, true);
  if (!why.empty()) return why;
  const int64_t H = ctx.constant_input(kRnnR)->dim(2);
  if (H < kRowTeamMinHidden || H > kRowTeamMaxHidden) return "hidden size outside the team's range";
  // Two directions on two threads: a direction each (oneDNN's primitive, rnn_chooser.cc) ran
  // faster below 384 units (LSTM of 256: 1.39 against 1.46 ms in slices, T = 100).
  if (spec.num_directions() == 2 && o.max_threads <= 2 && H < 384)
    return "two directions take a thread each";
  return "";
}

RECUR_LOAD_PATH Result<std::unique_ptr<Kernel>> create_row_team_kernel(const CompileContext& ctx,
                                                                       const RnnSpec& spec,
                                                                       const OnednnOptions& o) {
  auto k = std::make_unique<RowTeamKernel>(ctx.node(), spec, o.team());
  k->init(*ctx.constant_input(kRnnW), *ctx.constant_input(kRnnR), ctx.constant_input(kRnnB),
          ctx.constant_input(kRnnP));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace recur::onednn
