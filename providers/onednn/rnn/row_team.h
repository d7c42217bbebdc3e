// A few rows of a wide float32 LSTM or GRU on a team of threads: recur's own loop, not oneDNN's
// primitive (docs/semantics.md, "A few rows of a wide cell").
//
// A stream or a single utterance is one row (a few streams or beams a few), and each step of a
// wide cell multiplies the rows' h by all of R (4 MiB for an LSTM of 512 units). On two cores
// oneDNN 2.6's primitive took 0.53-0.66x ONNX Runtime's time for LSTMs of 384 to 512 units over one
// row (100 steps: 512 units 8.3 against 4.4 ms; one core level, 16.3 and 15.7): its threads did not
// keep their parts of R in their cores' L2 from step to step. Here the units are cut into one slice
// a thread, and each slice's columns of W and R (its units' gates) are packed at load into buffers
// of their own; X.W + bias of up to 256 steps at once (reading W's columns evicts R's from the
// cache), then a step is one job a slice (job_pool.h), which reads the whole h of the step before
// and writes its units' h (and c). A thread that keeps taking the same slice keeps that slice's R
// in its L2. Two threads, 100 steps, p50 ms, slices / primitive: LSTM of 256 units 0.65 / 1.00,
// 384 1.30 / 2.66, 512 5.5 / 10.3, 768 20.9 / 22.4, 1024 37.3-38.2 / 36.9-39.4 (hence
// kRowTeamMaxHidden); GRU of 512 2.39 / 4.07.
//
// rnn_kernel.cc runs it for up to row_team_max_rows rows, oneDNN's primitive otherwise; it takes
// the LSTMs and GRUs the small-cell kernels take (small_cell.h) but for their size, of
// kRowTeamMinHidden to kRowTeamMaxHidden units, with two threads or more.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "providers/onednn/common/dnnl_util.h"
#include "runtime/provider/kernel.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::onednn {

// From 192 units: an LSTM of 192 units over 512 inputs 0.53 / 0.65 ms, a GRU of 160 level
// (0.489 / 0.482). Mid-sized cells take the small-cell kernel first (small_cell.h).
inline constexpr int64_t kRowTeamMinHidden = 192;
// Rows a run may have: one product by a slice of R serves them all (small_cell.h, kRowBlock).
inline constexpr int64_t kRowTeamMaxRows = 4;

// The most rows a run of a cell of G gates and H units takes the row team for on `threads`
// threads: kRowTeamMaxRows while a thread's slice of R fits a core's L2 (2 MiB on this Xeon),
// else one. Two threads, 100 steps, 4 rows, p50 ms, row team / primitive / ONNX Runtime: LSTM
// of 512 units (2 MiB a slice) 9.2 / 11.8 / 7.1, of 768 units (4.5 MiB) 33.1 / 23.4 / 23.0.
inline int64_t row_team_max_rows(int64_t G, int64_t H, int threads) {
  const double slice_bytes = 4.0 * static_cast<double>(G * H) * static_cast<double>(H) /
                             static_cast<double>(std::max(threads, 1));
  return slice_bytes <= 2.0 * 1024 * 1024 ? kRowTeamMaxRows : 1;
}
inline constexpr int64_t kRowTeamMaxHidden = 768;

// Why the LSTM or GRU node of `ctx` does not take the row-team kernel, or "" when it does.
std::string row_team_declined(const CompileContext& ctx, const RnnSpec& spec,
                              const OnednnOptions& o);

// The row-team kernel of such a node, its slices packed for o.max_threads threads; it keeps the
// node's weights (the caller's oneDNN kernel packs them too).
Result<std::unique_ptr<Kernel>> create_row_team_kernel(const CompileContext& ctx,
                                                       const RnnSpec& spec, const OnednnOptions& o);

}  // namespace recur::onednn
