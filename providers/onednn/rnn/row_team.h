// A few rows of a wide float32 LSTM, GRU or RNN on a team of threads: recur's own loop, not
// oneDNN's primitive (docs/semantics.md, "A few rows of a wide cell").
//
// A stream or a single utterance is one row (a few streams or beams a few), and each step of a
// wide cell multiplies the rows' h by all of R (4 MiB for an LSTM of 512 units). On two cores
// oneDNN 2.6's primitive took 0.53-0.66x ONNX Runtime's time for LSTMs of 384 to 512 units over one
// row (100 steps: 512 units 8.3 against 4.4 ms; one core level, 16.3 and 15.7): its threads did not
// keep their parts of R in their cores' L2 from step to step. Here the units are cut into one slice
// a thread, and each slice's columns of W and R (its units' gates) are packed at load into buffers
// of their own; X.W + bias of up to 256 steps at once (reading W's columns evicts R's from the
// cache), then a step is one job a slice (job_pool.h), which reads the whole h of the step before
// and writes its units' h (and c), the block's steps rounds of one parallel region (run_rounds).
// A thread that keeps taking the same slice keeps that slice's R in its L2 (thread k takes
// job k), or as much of it as L2 holds where it is larger
// (each step reads it in the reverse order of the step before). Two threads, 100 steps, one
// row, p50 ms, slices / primitive: LSTM of 256 units 0.65 / 1.00, 384 1.30 / 2.66, 512 4.37 /
// 6.13; GRU of 512 2.24 / 4.12.
//
// rnn_kernel.cc runs it for the rows row_team_rows gives, oneDNN's primitive otherwise; it takes
// the LSTMs, GRUs and RNNs the small-cell kernels take (small_cell.h) but for their size, of
// kRowTeamMinHidden to kRowTeamMaxHidden units.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "runtime/provider/kernel.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::onednn {

// From 192 units: an LSTM of 192 units over 512 inputs 0.53 / 0.65 ms, a GRU of 160 level
// (0.489 / 0.482). Mid-sized cells take the small-cell kernel first (small_cell.h).
inline constexpr int64_t kRowTeamMinHidden = 192;
// Rows a run may have: each step takes every column block of a slice of R for all of them
// (avx512::multiply_row_set) while the block is in the core's cache. 32 only for the widest
// LSTMs (row_team_rows).
inline constexpr int64_t kRowTeamMaxRows = 32;

// The most rows a run takes the row team for (from one), for a `cell` of H units on `threads`
// threads, by the size of a thread's slice of R and `l2_bytes`, a core's L2 (core_l2_bytes).
// Two machines were measured, and their primitives differ more than their caches: a Xeon
// (2 MiB L2; its rule also where the L2 is unknown) and a Zen 5 EPYC (1 MiB L2; its rule for
// any L2 under 2 MiB). Each step reads the slice's column blocks in the reverse order of the
// step before (row_team.cc), so that past L2 a step still finds much of its slice there: from
// that order on, one row ran faster on the team at every size measured on either. The Xeon's
// most rows: 4 under 1 MiB (whose primitive keeps R in L2 too), 16 to 2 MiB, 8 past it, 4 for
// a GRU past 4 MiB, and 32 for an LSTM past 16 MiB (on one thread too, and on the Zen 5: LSTM
// 2048, 30 steps, two threads, 16 rows 103 / 139 ms, 32 rows 199 / 254), where oneDNN 2.6's
// primitive ran slower than the team and than ONNX Runtime at every row count measured; more
// rows gain from the primitive's larger products. Two threads, 100 steps, p50 ms, row team /
// primitive, alternated:
//   LSTM 512 (2 MiB a slice), 1 row 4.37 / 6.13, 8 rows 12.7 / 16.3, 16 rows 21.7 / 24.0, 32
//   rows 42.3 / 37.4; LSTM 448, 16 rows 15.5 / 17.9; LSTM 256 (0.5 MiB), 8 rows 2.78 / 2.63;
//   GRU 384 (0.84 MiB), 8 rows 5.23 / 5.31, 16 rows 14.8 / 13.9; RNN 512 (0.5 MiB), 1 row 0.73
//   / 1.07, 4 rows 1.79 / 1.88, 8 rows 3.47 / 3.06; RNN 1024 (2 MiB), 1 row 5.64 / 12.47, 16
//   rows 39.2 / 44.3; GRU 640 (2.4 MiB), 1 row 6.56 / 9.11, 4 rows 9.36 / 12.89, 8 rows 16.3
//   / 17.2, 16 rows 28.3 / 28.9. With the reversed order: LSTM 640 (3.1 MiB), 1 row 7.62 /
//   12.82, 8 rows 20.2 / 25.3, 16 rows 40.6 / 40.6; LSTM 1024 (8 MiB), 1 row 27.5 / 30.6, 8
//   rows 61.9 / 61.6, 16 rows 103.6 / 98.2; LSTM 1536 (40 steps), 1 row 28.8 / 29.8, 4 rows
//   37.9 / 44.5, 8 rows 59.6 / 62.8; LSTM 2048 (30 steps), 1 row 41.7 / 45.7, 8 rows 88.1 /
//   172.7; GRU 768 (3.4 MiB), 1 row 8.48 / 13.16, 4 rows 13.4 / 16.6, 8 rows 23.3 / 24.4;
//   GRU 1024 (6 MiB), 1 row 19.4 / 23.8, 4 rows 27.7 / 29.5, 8 rows 45.1 / 43.7; GRU 1536 (40
//   steps), 4 rows 28.0 / 29.1, 8 rows 44.1 / 39.0; linear_before_reset 0, GRU 768 1 row 12.3
//   / 16.4, GRU 1024 4 rows 33.1 / 32.0. One step (a decoder's), one row: LSTM 640 0.251 /
//   0.252, GRU 768 0.265 / 0.284, LSTM 1024 0.599 / 0.606. Past 16 MiB (30 steps): LSTM 2048
//   12 rows 132 / 226, 16 rows 179 / 263, 24 rows 246 / 326, 32 rows 301 / 367 (ONNX Runtime
//   340); LSTM 1536 16 rows 84.4 / 97.4, 32 rows 160 / 181; but GRU 2048 8 rows 68.1 / 64.7,
//   16 rows 118 / 104, and LSTM 1024 (8 MiB) 16 rows 59.3 / 57.4.
// On one thread the slice is all of R: on the Xeon 4 rows, 8 where R is 2 to 4 MiB (one
// thread, 100 steps, team / primitive: LSTM 224 0.82 / 0.95, 256 1.18 / 1.72, 1024 63.4 / 69.5; GRU
// 256 0.80 / 0.98; bidirectional LSTM 256 2.25 / 2.62; 4 rows LSTM 640 31.4 / 38.6, 1024 84.9 /
// 110.5; with the reversed order, 1 row LSTM 1024 59.2 / 67.4, 4 rows LSTM 512 16.2 / 22.0,
// LSTM 2048 152 / 229, GRU 768 30.6 / 34.0; 8 rows LSTM 384 13.6 / 17.1, LSTM 512 26.4 /
// 30.3, GRU 512 18.7 / 20.3, but LSTM 256 5.70 / 5.36 and GRU 768 49.3 / 48.1; 20 steps, LSTM
// 1536 16 rows 123 / 171, LSTM 2048 16 rows 273 / 342, 32 rows 430 / 508, but LSTM 1024 (16
// MiB) 8 rows 41.2 / 39.0).
// On the Zen 5 the team at 8 rows beat oneDNN's primitive on slices within twice L2, where the
// Xeon's rule gives the primitive runs of more than 4 rows under 1 MiB: two threads, 100 steps,
// team / primitive, p50 ms, alternated: LSTM 224 (0.38 MiB a slice) 2.67 / 3.78, LSTM 256 3.30
// / 4.23, LSTM 320 4.86 / 6.12, GRU 256 2.53 / 3.10, GRU 320 4.04 / 4.72, RNN 512 3.08 / 4.23, LSTM
// 384 (1.2 MiB) 7.25 / 8.08, GRU 448 7.17 / 7.66, LSTM 512 (2 MiB) 12.1 / 12.3; but 16 rows went
// either way (LSTM 256 6.39 / 7.26, GRU 256 5.01 / 4.56, LSTM 320 10.2 / 10.1) and from 1 MiB lost
// (LSTM 384 15.0 / 14.3, LSTM 448 19.7 / 18.7, LSTM 512 24.7 / 22.4). One thread, 8 rows: LSTM 224
// (R 0.77 MiB) 4.14 / 4.64, LSTM 256 5.16 / 6.61, LSTM 320 8.05 / 8.55, LSTM 384 (2.25 MiB)
// 11.4 / 12.0, but LSTM 512 (4 MiB) 22.2 / 19.3, and GRUs lost (GRU 320 6.88 / 6.29, GRU 448
// 13.2 / 12.5). Past twice L2 it measured as the Xeon did (two threads, 8 rows: LSTM 640 19.1
// / 18.9, LSTM 1024 46.0 / 77.1, GRU 768 20.0 / 20.4).
// Measured again on the Zen 5 on 2026-12-01 (8 rows, 100 steps, I = H, p50 ms, three rounds
// alternated, team / primitive), the GRUs and RNNs of one thread a slice won to four times L2:
// one thread, GRU 256 (0.75 MiB) 2.67-2.72 / 2.67-2.82, GRU 320 4.13-4.17 / 4.29-4.40, GRU 384
// 6.11-6.29 / 6.51-6.69, GRU 512 (3 MiB) 10.3-11.0 / 11.1-12.3, linear_before_reset 0 GRU 320
// 4.14-4.21 / 4.24-4.31, RNN 512 3.37-3.39 / 3.55-3.63, RNN 768 7.61-7.81 / 7.95-8.18, RNN 1024
// (4 MiB) 13.3-13.6 / 13.5-14.0, and level past it (GRU 640 16.5-17.3 / 16.2-16.9, GRU 768
// 23.2-24.6 / 23.4-24.0); bidirectional on two threads, the directions apart: GRU 256 2.80-2.82
// / 2.82-2.97, GRU 384 6.14-6.57 / 6.73-7.05, GRU 512 11.2-11.5 / 13.1-13.7. oneDNN 2.6 runs
// those on its gemm-based reference RNN; its LSTMs, on brgemm, kept their rule (LSTM 448 10.7-
// 10.9 / 10.6-10.7, LSTM 512 13.8-14.3 / 13.4-13.6). A deployed DeepSpeech2 (three
// bidirectional GRUs of 256) at 8 rows then never builds the primitive: no second copy of the
// weights, no scratchpads of every step's gates, no sgemm JIT at its first run. On two threads,
// slices within twice L2, GRUs and RNNs won at 16 rows too (unidirectional, 16 rows, team /
// primitive at 8: GRU 384 6.36-6.61 / 6.71-7.22, GRU 512 level, RNN 512 3.93-4.01 / 4.22-4.41,
// RNN 1024 14.0-14.6 / 16.3-17.2; an NSNet2 denoiser, GRUs of 400, at 12 rows 15.2-15.7 /
// 16.2-16.5, at 16 rows 20.4-20.7 / 21.2-21.8), while LSTMs were level (LSTM 384 8.55-9.07 /
// 8.70-9.30) and GRU 384 lost at 32 rows (13.3 / 12.9).

inline int64_t row_team_rows(RnnCell cell, int64_t H, int threads, int64_t l2_bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const int64_t gates = cell == RnnCell::kLstm ? 4 : cell == RnnCell::kGru ? 3 : 1;
  const double slice_bytes = 4.0 * static_cast<double>(gates * H) * static_cast<double>(H) /
                             static_cast<double>(std::max(threads, 1));
  if (cell != RnnCell::kGru && slice_bytes > 16.0 * kMiB) return kRowTeamMaxRows;
  const double l2 = static_cast<double>(l2_bytes);
  if (small_l2(l2_bytes)) {
    if (threads <= 1) {
      const double fits = cell == RnnCell::kLstm ? 2.0 * l2 : 4.0 * l2;
      return slice_bytes <= fits ? 8 : 4;
    }
    if (slice_bytes <= 2.0 * l2) return cell == RnnCell::kLstm ? 8 : 16;
  }
  if (threads <= 1) return slice_bytes >= 2.0 * kMiB && slice_bytes <= 4.0 * kMiB ? 8 : 4;
  if (slice_bytes < 1.0 * kMiB) return 4;
  if (slice_bytes <= 2.0 * kMiB) return 16;
  return cell == RnnCell::kGru && slice_bytes > 4.0 * kMiB ? 4 : 8;
}
// Past 2048 units no size was measured (LSTM 2048: row_team_rows).
inline constexpr int64_t kRowTeamMaxHidden = 2048;

// Whether the two directions of a node run at once, a thread each (each direction one slice),
// rather than one after the other with the units in a slice a thread: on two threads, under
// 384 units, and on a core of less than 2 MiB of L2 (`l2_bytes`, a Zen 5's 1 MiB) while a
// direction's R is at most 8 times L2 (an LSTM of 724 units). A step of the slices ends at a
// barrier of both threads, the directions apart meet once a pass. On the Xeon slices won from
// 384 units (docs/semantics.md, "Two directions apart"); on the Zen 5, two threads, 100 steps,
// p50 ms apart / slices, alternated, 3 rounds: one row LSTM 256 1.42 / 2.13, LSTM 384 3.42 /
// 5.01, LSTM 512 6.54 / 8.08, LSTM 640 10.6 / 11.9, LSTM 768 15.0 / 16.3, GRU 384 2.27 / 3.08,
// GRU 640 6.60 / 8.51, RNN 1024 6.15 / 7.72; 4 rows LSTM 640 18.1 / 19.8, GRU 640 13.5 / 14.7,
// RNN 1024 11.0 / 12.9; 8 rows LSTM 256 5.38 / 6.49, LSTM 320 9.49 / 11.1. Apart, a direction
// takes the rows of a one-thread session (row_team_rows), so LSTM 448 at 8 rows runs on the
// primitive: 19.7 against 17.9 on the slices.
bool directions_apart(const RnnSpec& spec, int64_t H, int threads, int64_t l2_bytes);

// Why the LSTM, GRU or RNN node of `ctx` does not take the row-team kernel, or "" when it does.
std::string row_team_declined(const CompileContext& ctx, const RnnSpec& spec,
                              const OnednnOptions& o);

// The row-team kernel of such a node, its slices packed for o.max_threads threads, the most rows
// it takes, and the node's W and R read back from its slices: the caller's oneDNN primitive takes
// its weights from there at the first run it takes, so a node whose runs all take the team holds
// them once.
struct RowTeam {
  std::shared_ptr<const Kernel> kernel;
  OnnxWeightsSource weights;
  bool apart = false;      // directions_apart
  int64_t max_rows = 0;    // row_team_rows, with one thread a direction where apart
  Shape w_shape, r_shape;  // of the ONNX W and R, which the team has released
};
// Releases constant W and R (CompileContext::release_input_now): `weights` gives them back.
RowTeam create_row_team_kernel(CompileContext& ctx, const RnnSpec& spec, const OnednnOptions& o);

}  // namespace recur::onednn
