// Small-cell float32 RNNs on CPUs with AVX-512, or AVX2 and FMA (avx2_rows.h,
// small_cell_avx2.cc): recur's own loops, not oneDNN primitives.
// oneDNN 2.6's RNN primitives pay about 1.5 us per time step whatever the cell's size (its
// brgemm dispatch and separate element-wise pass per step), so a cell of a few thousand
// weights, as tagging, language and streaming models use, spends most of its time there:
// models/packed_bilstm_tagger (H=24) ran at 1.7 us a step where the arithmetic takes 0.1 us.
// These kernels do the input projection of 16 steps at a time (X.W + bias, the part of a step
// that does not wait for the previous one), then each step's h.R and cell update in one pass per
// block of four rows, the weights packed at load in column blocks so that a pass streams them
// once for the four rows. Sequence lengths are native: each row walks its own length, the
// reverse direction from its own end.
//
// They take the LSTM (small_lstm.cc), GRU (small_gru.cc) and RNN (small_rnn.cc) nodes the
// oneDNN provider claims that have constant weights and a cell of at most kSmallCellMaxMacs
// multiply-adds a row-step; `onednn.impl` other than auto sends them to oneDNN's primitive
// again. --explain says which ran. They also run every cell, of any size, whose clip or
// activations oneDNN's primitives do not have (rnn_claim.cc): a gate at a time, clipped and
// activated in place (small_cell_math.cc), where the default cells fuse their updates.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "runtime/provider/kernel.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::onednn {

// The largest cell, in multiply-adds per row and step (G H (I + H)), that takes a small-cell
// kernel: an LSTM with H=128 and I=128. Above it oneDNN's primitive is as fast per step and
// threads better.
inline constexpr int64_t kSmallCellMaxMacs = 4 * 128 * 256;

// Mid-sized cells, above kSmallCellMaxMacs up to kMidCellMaxMacs with at most
// kMidCellMaxHidden units, take the small-cell kernel for runs of up to mid_cell_rows rows
// where it has a job (a direction, a slice of rows) for each thread, and oneDNN's primitive
// otherwise (rnn_kernel.cc, RowSplitRnnKernel). On the Xeon (2 MiB of L2), over 100 steps, p50,
// against the primitive: at one row, a bidirectional LSTM of 128 units over 256 inputs 0.85
// against 1.11 ms on one thread and 0.46 against 1.21 on two, of 192 units 1.69 against 1.97
// and 0.97 against 1.11, a GRU of 128 units over 512 inputs 0.95 against 1.18 and 0.51 against
// 1.19; even at four rows; 5-10% slower at eight, and slower from an LSTM of 192 units over 384
// inputs (2.37 against 2.16 at one row).
inline constexpr int64_t kMidCellMaxMacs = 4 * 192 * 512;
inline constexpr int64_t kMidCellMaxHidden = 192;
// On a core of small L2 (small_l2) an LSTM's or a GRU's cell of fewer than 192 units is
// mid-sized up to this size. On the Zen 5 (1 MiB; 2026-12-01, 100 steps, p50 ms, small /
// primitive, alternated) the small kernel ran far ahead where a wide input makes the cell large:
// an LSTM of 128 over 2048 inputs at 4 rows on two threads 1.87-1.91 / 4.96-4.97, at 16 rows
// on one thread 14.5 / 17.0-17.3; a bidirectional GRU of 176 over 2048 at one row on two
// threads 1.11-1.14 / 2.24-2.26; a bidirectional LSTM of 128 over 1024 at one row 0.58-0.61 /
// 1.20-1.21, at 16 rows 7.80-7.92 / 8.42-8.62; an LSTM of 176 over 512 at 4 rows 1.70-1.71 /
// 2.40-2.41. An RNN's is not: one of 160 over 4096 inputs lost at 16 rows on one thread (10.6-
// 10.7 / 9.05-9.07), its input projection being most of its work. Cells of 192 units stay on
// the row team (row_team.h), level with the small kernel (LSTM 192 over 1024, one row on two
// threads, 0.55-0.56 on the team / 0.63).
inline constexpr int64_t kMidCellMaxMacsSmallL2 = 4 * 192 * 1536;
inline int64_t mid_cell_max_macs(RnnCell cell, int64_t H, int64_t l2_bytes) {
  const bool wide = small_l2(l2_bytes) && cell != RnnCell::kRnn && H < kMidCellMaxHidden;
  return wide ? kMidCellMaxMacsSmallL2 : kMidCellMaxMacs;
}
// The most rows of a mid-sized cell's run on the small-cell kernel: 4 on the Xeon, 16 on a
// core of small L2. On the Zen 5 (1 MiB) the small kernel was level or ahead at 8 and 16 rows
// (100 steps, p50 ms, three rounds alternated at 8 rows, two at 16, small / primitive): at 8
// rows on two threads a GRU of 128 over 512 inputs 0.83-0.85 / 1.19-1.26, an LSTM of 160 over
// 256 1.00 / 1.31-1.33, an RNN of 192 over 512 0.47-0.50 / 0.70-0.77, bidirectional GRU 160
// over 320 1.64-1.66 / 1.69-1.76, bidirectional LSTM 128 over 256 1.46-1.47 / 1.56-1.62, and
// level on one thread (LSTM 128 bidirectional 2.84-2.89 / 2.82-2.88); at 16 rows on two threads
// GRU 128 1.65-1.66 / 1.94-2.05, RNN 192 0.95-0.96 / 1.12-1.13, on one thread from 5% behind
// to 3% ahead (LSTM 160 3.85-3.89 / 3.65-3.82, GRU 128 3.18-3.22 / 3.29-3.30). From 32 rows they
// went either way (LSTM 160 over 256, one thread, 64 rows: 15.4-15.8 / 14.8-14.9).
inline int64_t mid_cell_rows(int64_t l2_bytes) { return small_l2(l2_bytes) ? 16 : 4; }

// The rules of rows above (mid_cell_rows, row_team.h's row_team_rows) were measured against
// oneDNN's AVX-512 primitives. Without AVX-512 (avx2_rows.h) the few-row kernels stop at 4 rows:
// on a Zen 4 under ONEDNN_MAX_CPU_ISA=AVX2 (two threads, alternated, the node's mean ms a run,
// recur / primitive) resnet_ocr's bidirectional LSTM of 128 over 512 took 0.74-0.78 / 1.33-1.60
// at one row but 4.59-4.65 / 3.27-3.90 at 8, and nsnet's GRU of 400 over 100 steps on the row
// team 4.6 / 5.0-5.3 at 2 rows, 6.7-6.9 / 6.0-7.3 at 4, 14.3-14.8 / 13.4 at 8.
inline constexpr int64_t kAvx2FewRows = 4;
inline int64_t few_rows_here(int64_t rows) {
  return avx512::have_avx512() ? rows : std::min(rows, kAvx2FewRows);
}

// The most rows a small cell's run takes the small-cell kernel for, 0 for any number: with
// AVX-512 every run (the node holds only that kernel's weights); without it oneDNN's AVX2
// primitive wins from some tens of rows, so the node holds both kernels, as a mid-sized cell's.
// On a Zen 4 under ONEDNN_MAX_CPU_ISA=AVX2 (two threads, 50 steps, p50 ms, small / primitive,
// two rounds): LSTM of 64 over 64 inputs 0.064-0.080 / 0.116-0.122 at one row, 0.17 / 0.34 at
// 4, 0.59 / 0.62-0.68 at 16, 2.61-2.66 / 2.46-2.66 at 64, 10.2-10.3 / 9.4-9.9 at 256;
// bidirectional LSTM of 128 over 64 3.23 / 3.90-4.11 at 16, 12.8 / 14.7-15.4 at 64, 54.0-54.3 /
// 47.1-48.7 at 256; RNN of 128 over 64 0.41 / 0.52-0.53 at 16, 1.60-2.16 / 2.09-2.11 at 64, 7.9-8.7
// / 7.3-7.7 at 256; bidirectional GRU of 96 over 64 with linear_before_reset 0.39-0.40 /
// 0.40-0.42 at 4, 1.43-1.58 / 1.40-1.59 at 16, 6.41-6.46 / 5.79-6.42 at 64, 29-42 / 22-23 at
// 256; without it 0.13-0.14 / 0.21-0.31 at one row, 0.30-0.41 / 0.32-0.34 at 4, 1.61-1.64 /
// 1.35-1.49 at 16, 6.45-6.65 / 5.33-5.39 at 64.
inline int64_t small_cell_rows(const RnnSpec& spec) {
  if (avx512::have_avx512()) return 0;
  if (spec.cell != RnnCell::kGru) return 64;
  return spec.linear_before_reset ? 16 : 4;
}

// Whether the cell's gates need the general path (small_cell_math.cc): a clip, or activations
// other than the default (an RNN's tanh, relu or sigmoid in each direction). The small-cell
// kernels and the row team have it (CellMath below); oneDNN's primitive does not.
bool general_cell_math(const RnnSpec& spec);

// Why no small-cell kernel can take the RNN node, whatever its math and size: its weights are
// not constant float32 initializers of rank 3, or the CPU has no AVX2; "" when one can.
std::string small_kernel_declined(const Node& node, const Graph& graph, const RnnSpec& spec);

// Why the RNN node of `ctx` does not take a small-cell kernel, or "" when it does; with
// `mid_sized`, why it is not a mid-sized cell that does; with `any_size`, the conditions but
// the cell's size (row_team.h).
std::string small_rnn_declined(const CompileContext& ctx, const RnnSpec& spec,
                               const OnednnOptions& o, bool mid_sized = false,
                               bool any_size = false);

Result<std::unique_ptr<Kernel>> create_small_rnn_kernel(CompileContext& ctx, RnnSpec spec,
                                                        const OnednnOptions& o);

// The small-cell kernel of the general-path node of `ctx` (a wide one, which the row team takes
// for few rows), built at the first run that reaches it: from `source`, the node's W and R as
// the team holds them (row_team.h), so that a node whose runs all take the team holds its
// weights once. `w_shape` and `r_shape` are the ONNX W and R the team has released; B and P are
// copied now and released.
Result<std::unique_ptr<Kernel>> create_deferred_small_rnn_kernel(CompileContext& ctx, RnnSpec spec,
                                                                 const OnednnOptions& o,
                                                                 OnnxWeightsSource source,
                                                                 const Shape& w_shape,
                                                                 const Shape& r_shape);

// The vector width the small-cell kernels run at here, for --explain: "AVX-512" or "AVX2".
const char* small_cells_isa();

namespace small {

using namespace avx512;  // NOLINT: the kernels are written in its terms

inline constexpr int64_t kTimeBlock = 16;  // steps whose input projection is done together
inline constexpr int64_t kBlockFloats = int64_t{1} << 20;  // the most a block's projection holds

// Steps per input-projection block for `rows` rows of Gx gates: kTimeBlock, fewer for a large
// batch so that the block stays within kBlockFloats (4 MiB).
inline int64_t time_block(int64_t rows, int64_t Gx) {
  return std::clamp<int64_t>(kBlockFloats / std::max<int64_t>(1, rows * Gx), 1, kTimeBlock);
}
inline constexpr size_t kMaxJobs = 16;

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// A run's rows (RnnBuffers), their lengths and their order.
struct Io : RnnBuffers {
  const int32_t* lens = nullptr;   // null: every row has T steps
  const int64_t* order = nullptr;  // rows by decreasing length
  float* y_at(int64_t t, int64_t d, int64_t n) const { return y + y_off(t, d, n); }
  int64_t len(int64_t n) const { return lens ? lens[n] : T; }
};

// Rows order[first], order[first + stride], ... of direction d.
struct Job {
  int d = 0;
  int64_t first = 0, stride = 1, rows = 0;
  int64_t row(const Io& io, int64_t q) const { return io.order[first + q * stride]; }
};

// One direction's weights of a cell whose step is one product with R (LSTM, RNN): W and R packed
// by pack_columns, and Wb + Rb.
struct OneProductWeights {
  std::unique_ptr<AlignedBuffer> w, r, bias;
};

// n floats of zeros, aligned (a bias row where the node has none).
std::unique_ptr<AlignedBuffer> zeros(int64_t n);

// Shape-only stand-ins for weights a kernel has packed and released, for check_rnn_inputs.
struct WeightShapes {
  Tensor w, r, b, p;
  void keep(const Tensor& w_in, const Tensor& r_in, const Tensor* b_in, const Tensor* p_in);
};

// A run's checks and buffers: the inputs checked against `spec` and `shapes` (float32 on the
// host), Y allocated (zeros past a row's length where any row is short) and Y_h and Y_c where
// asked for.
Status begin_run(KernelContext& ctx, const Node& node, const RnnSpec& spec,
                 const WeightShapes& shapes, int64_t I, int64_t H, Io& io);

// The cell updates, each on AVX-512 (small_lstm.cc, small_gru.cc, small_rnn.cc) or on AVX2
// (small_cell_avx2.cc). The choice is made here, in plain code: a function compiled for
// AVX-512 may use its registers before any test in its own body.
void lstm_cell_update_avx512(const float* g, int64_t H, const float* p, bool input_forget, float* c,
                             float* h);
void lstm_cell_update_avx2(const float* g, int64_t H, const float* p, bool input_forget, float* c,
                           float* h);
void sigmoid_rows_avx512(float* g, int64_t n);
void sigmoid_rows_avx2(float* g, int64_t n);
void scale_rows_avx512(const float* r, const float* h, int64_t n, float* out);
void scale_rows_avx2(const float* r, const float* h, int64_t n, float* out);
void gru_update_avx512(const float* z, const float* r, const float* gh, const float* xh, int64_t H,
                       float* h);
void gru_update_avx2(const float* z, const float* r, const float* gh, const float* xh, int64_t H,
                     float* h);
void rnn_activate_avx512(const float* g, int64_t H, RnnActivation::Kind f, float* h);
void rnn_activate_avx2(const float* g, int64_t H, RnnActivation::Kind f, float* h);

// One LSTM row's cell update from its gates g (ONNX order i, o, f, c, each H wide): c and h in
// place. p: the peepholes i, o, f (3H), or null.
inline void lstm_cell_update(const float* g, int64_t H, const float* p, bool input_forget, float* c,
                             float* h) {
  if (avx512_here()) return lstm_cell_update_avx512(g, H, p, input_forget, c, h);
  lstm_cell_update_avx2(g, H, p, input_forget, c, h);
}

// A GRU row's parts: the sigmoid of n gates in place; out = r . h; and h = h~ + z (h - h~) in
// place, h~ = tanh(gh) or, given xh (linear_before_reset), tanh(xh + r gh).
inline void sigmoid_rows(float* g, int64_t n) {
  if (avx512_here()) return sigmoid_rows_avx512(g, n);
  sigmoid_rows_avx2(g, n);
}
inline void scale_rows(const float* r, const float* h, int64_t n, float* out) {
  if (avx512_here()) return scale_rows_avx512(r, h, n, out);
  scale_rows_avx2(r, h, n, out);
}
inline void gru_update(const float* z, const float* r, const float* gh, const float* xh, int64_t H,
                       float* h) {
  if (avx512_here()) return gru_update_avx512(z, r, gh, xh, H, h);
  gru_update_avx2(z, r, gh, xh, H, h);
}

// A vanilla RNN row's update: h = f(g) over H units, f tanh, relu or sigmoid.
inline void rnn_activate(const float* g, int64_t H, RnnActivation::Kind f, float* h) {
  if (avx512_here()) return rnn_activate_avx512(g, H, f, h);
  rnn_activate_avx2(g, H, f, h);
}

// The general path (general_cell_math), as the reference provider computes it: each gate's
// pre-activation clipped to [-clip, clip] where the cell has a clip, then activated.
// x = f(clip(x)), n values in place.
void activate_rows(float* x, int64_t n, const RnnActivation& f, const std::optional<float>& clip);
// An LSTM row from its gates g (i, o, f, c; overwritten): the peepholes p (i, o, f) or null,
// `act` the direction's f, g and h (h of the cell state, not clipped).
void lstm_cell_general(float* g, int64_t H, const float* p, bool input_forget,
                       const RnnActivation* act, const std::optional<float>& clip, float* c,
                       float* h);
// A GRU row once z and r are activated: h~ = g(clip(gh)) or, given xh (linear_before_reset),
// g(clip(xh + r gh)), in gh; then h = (1 - z) h~ + z h.
void gru_update_general(const float* z, const float* r, float* gh, const float* xh, int64_t H,
                        const RnnActivation& g, const std::optional<float>& clip, float* h);

// One direction's gate math, for the kernels that run both paths (the small-cell kernels and
// the row team): the fused updates above, or with `general` (general_cell_math) those of
// small_cell_math.cc over the direction's activations and the clip. The overloads below take
// one or the other, so that a kernel writes each update once.
struct CellMath {
  bool general = false;
  const RnnActivation* act = nullptr;  // the direction's activations in ONNX's order
  std::optional<float> clip;
};
inline CellMath cell_math(const RnnSpec& spec, bool general, int d) {
  return {general, &spec.activation(d, 0), spec.clip};
}
inline void lstm_cell_update(const CellMath& m, float* g, int64_t H, const float* p,
                             bool input_forget, float* c, float* h) {
  if (m.general) return lstm_cell_general(g, H, p, input_forget, m.act, m.clip, c, h);
  lstm_cell_update(g, H, p, input_forget, c, h);
}
// A GRU's z and r (n values from the first).
inline void gru_gates(const CellMath& m, float* g, int64_t n) {
  if (m.general) return activate_rows(g, n, m.act[0], m.clip);
  sigmoid_rows(g, n);
}
inline void gru_update(const CellMath& m, const float* z, const float* r, float* gh,
                       const float* xh, int64_t H, float* h) {
  if (m.general) return gru_update_general(z, r, gh, xh, H, m.act[1], m.clip, h);
  gru_update(z, r, gh, xh, H, h);
}
inline void rnn_activate(const CellMath& m, const float* g, int64_t H, float* h) {
  if (!m.general) return rnn_activate(g, H, m.act[0].kind, h);
  std::memcpy(h, g, static_cast<size_t>(H) * sizeof(float));
  activate_rows(h, H, m.act[0], m.clip);
}

// The weights a small-cell kernel packs: the node's constants at load (`ctx` set), each
// released as soon as it is packed so that both ONNX copies are never held beside both packed
// ones, or copies of its caller's (ctx null: nothing to release, and no note).
struct CellWeights {
  const Tensor* w = nullptr;
  const Tensor* r = nullptr;
  const Tensor* b = nullptr;  // null where the node has none
  const Tensor* p = nullptr;
  CompileContext* ctx = nullptr;

  static CellWeights of(CompileContext& ctx) {
    return {ctx.constant_input(kRnnW), ctx.constant_input(kRnnR), ctx.constant_input(kRnnB),
            ctx.constant_input(kRnnP), &ctx};
  }
  bool dies_on_release(size_t i) const { return ctx && ctx->input_dies_on_release(i); }
  void release(size_t i) const {
    if (ctx) ctx->release_input_now(i);
  }
  void note(std::string text) const {
    if (ctx) ctx->note(std::move(text));
  }
};

// What every small-cell kernel shares: the checks, the outputs, the rows sorted by length, the
// jobs (directions side by side, and interleaved slices of the rows with threads to spare),
// the scratch, and the walk over time.
class SmallRnnKernel : public Kernel {
 public:
  SmallRnnKernel(const Node& node, RnnSpec spec, int max_threads)
      : node_(node),
        spec_(std::move(spec)),
        max_threads_(max_threads),
        general_(general_cell_math(spec_)) {}
  Status run(KernelContext& ctx) const final;

 protected:
  // Keeps the weights' shapes for check_rnn_inputs; call it before anything is released.
  void keep_shapes(const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p) {
    shapes_.keep(w, r, b, p);
  }
  // Frees B and P (packed by now); W and R are freed as soon as each is packed.
  static void release_bias_and_peepholes(const CellWeights& cw);
  bool reverse(int d) const { return spec_.direction == RnnDirection::kReverse || d == 1; }
  // Floats of scratch one job of `rows` rows needs, and its run over them.
  virtual int64_t job_floats(int64_t rows) const = 0;
  virtual Status run_job(const KernelContext& ctx, const Io& io, const Job& j,
                         float* scratch) const = 0;
  // h (and c, when given) of job j's rows from the initial states, or zeros.
  void load_states(const Io& io, const Job& j, float* hs, float* cs) const;
  // Y_h and Y_c of job j's rows (a row of length 0 has none and gets zeros).
  void store_states(const Io& io, const Job& j, const float* hs, const float* cs) const;
  // The walk over job j's steps: per block of time_block steps, X.W + bias of the live rows
  // into xw ([time_block][rows][Gx]), then cell(t, q0, n, xw_rows) for each block of n <= 4 live
  // rows q0.. at step t, longest first.
  template <class Cell>
  Status walk(const KernelContext& ctx, const Io& io, const Job& j, const float* w,
              const float* bias, int64_t Gx, float* xw, Cell&& cell) const;

  // Direction d's weights of a one-product cell of G gate columns (LSTM 4H, RNN H), from
  // ONNX's W [D][G][I], R [D][G][H] and B [D][2G] (or none), a OneProductWeights a direction:
  // W and R packed into Gp columns, and Wb + Rb. W is packed for every direction and freed
  // (release_input_now), then R, so that both ONNX copies are never held beside both packed
  // ones; w and r dangle afterwards.
  std::vector<OneProductWeights> pack_one_products(const CellWeights& cw, int64_t G,
                                                   int64_t Gp) const;
  // The --explain note of a small-cell kernel.
  std::string note(const char* cell, int64_t G) const;

  // A cell whose step is one product with R (LSTM, RNN): the gates xw + h.R of each block of
  // rows, then update(gates, c, h) on each row (c null without a cell state), Y and the final
  // states written. Its scratch: one_product_floats.
  template <class Update>
  Status run_one_product(const KernelContext& ctx, const Io& io, const Job& j, float* scratch,
                         const float* w, const float* bias, const float* r, int64_t Gp, bool with_c,
                         Update&& update) const;
  // The gates of four rows, h (and c) of the job's rows, and a block's X.W + bias.
  int64_t one_product_floats(int64_t rows, int64_t Gp, bool with_c) const {
    return kRowBlock * Gp + (with_c ? 2 : 1) * rows * H_ + kLanes +
           time_block(rows, Gp) * rows * Gp;
  }

  const Node& node_;
  RnnSpec spec_;
  int max_threads_;
  bool general_;  // general_cell_math: gates clipped and activated one at a time
  int64_t I_ = 0, H_ = 0;

 private:
  WeightShapes shapes_;
  mutable ScratchPool scratch_;
};

template <class Cell>
Status SmallRnnKernel::walk(const KernelContext& ctx, const Io& io, const Job& j, const float* w,
                            const float* bias, int64_t Gx, float* xw, Cell&& cell) const {
  const bool rev = reverse(j.d);
  auto step = [&](int64_t t, int64_t q) { return rev ? io.len(j.row(io, q)) - 1 - t : t; };
  auto live = [&](int64_t t) {  // rows still running at step t: a prefix, longest first
    int64_t a = j.rows;
    while (a > 0 && io.len(j.row(io, a - 1)) <= t) --a;
    return a;
  };
  const bool fine = ctx.fine_grained_cancel();
  const int64_t steps = j.rows ? io.len(j.row(io, 0)) : 0;
  std::array<const float*, kRowSet> init{}, in{};
  std::array<float*, kRowSet> out{};
  const int64_t tb = time_block(j.rows, Gx);
  for (int64_t t0 = 0; t0 < steps; t0 += tb) {
    if (fine) RECUR_RETURN_IF_ERROR(ctx.check_cancelled("time step", t0));
    const int64_t t1 = std::min(steps, t0 + tb);
    int64_t nr = 0;
    auto flush = [&] {
      if (nr > 0) multiply_row_set(nr, init.data(), in.data(), io.I, w, Gx, out.data());
      nr = 0;
    };
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t a = live(t);
      for (int64_t q = 0; q < a; ++q) {
        init[static_cast<size_t>(nr)] = bias;
        in[static_cast<size_t>(nr)] = io.x_at(step(t, q), j.row(io, q));
        out[static_cast<size_t>(nr)] = xw + ((t - t0) * j.rows + q) * Gx;
        if (++nr == kRowSet) flush();
      }
    }
    flush();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t a = live(t);
      for (int64_t q0 = 0; q0 < a; q0 += kRowBlock) {
        const int n = static_cast<int>(std::min<int64_t>(kRowBlock, a - q0));
        std::array<const float*, kRowBlock> rows{};
        std::array<int64_t, kRowBlock> at{};
        for (int q = 0; q < n; ++q) {
          rows[static_cast<size_t>(q)] = xw + ((t - t0) * j.rows + q0 + q) * Gx;
          at[static_cast<size_t>(q)] = step(t, q0 + q);
        }
        cell(q0, n, rows.data(), at.data());
      }
    }
  }
  return ok_status();
}

template <class Update>
Status SmallRnnKernel::run_one_product(const KernelContext& ctx, const Io& io, const Job& j,
                                       float* scratch, const float* w, const float* bias,
                                       const float* r, int64_t Gp, bool with_c,
                                       Update&& update) const {
  const int64_t H = H_;
  float* g = scratch;                              // [kRowBlock][Gp]: one block's gates
  float* hs = g + kRowBlock * Gp;                  // [rows][H]
  float* cs = with_c ? hs + j.rows * H : nullptr;  // [rows][H]
  float* xw = hs + (with_c ? 2 : 1) * j.rows * H;  // [time_block][rows][Gp]
  xw += (kLanes - (xw - scratch) % kLanes) % kLanes;
  load_states(io, j, hs, cs);
  std::array<const float*, kRowBlock> hp{};
  std::array<float*, kRowBlock> gp{};
  RECUR_RETURN_IF_ERROR(
      walk(ctx, io, j, w, bias, Gp, xw,
           [&](int64_t q0, int n, const float* const* xw_rows, const int64_t* at) {
             for (int q = 0; q < n; ++q) {
               hp[static_cast<size_t>(q)] = hs + (q0 + q) * H;
               gp[static_cast<size_t>(q)] = g + q * Gp;
             }
             multiply_rows(n, xw_rows, hp.data(), H, r, Gp, gp.data());
             for (int q = 0; q < n; ++q) {
               float* h = hs + (q0 + q) * H;
               update(g + q * Gp, cs ? cs + (q0 + q) * H : nullptr, h);
               std::memcpy(io.y_at(at[q], j.d, j.row(io, q0 + q)), h,
                           static_cast<size_t>(H) * sizeof(float));
             }
           }));
  store_states(io, j, hs, cs);
  return ok_status();
}

// The kernels of each cell (small_lstm.cc, small_gru.cc, small_rnn.cc), for nodes
// small_rnn_declined takes or the general path's.
std::unique_ptr<Kernel> make_small_lstm(const Node& node, RnnSpec spec, int threads,
                                        const CellWeights& cw);
std::unique_ptr<Kernel> make_small_gru(const Node& node, RnnSpec spec, int threads,
                                       const CellWeights& cw);
std::unique_ptr<Kernel> make_small_rnn(const Node& node, RnnSpec spec, int threads,
                                       const CellWeights& cw);

}  // namespace small
}  // namespace recur::onednn
