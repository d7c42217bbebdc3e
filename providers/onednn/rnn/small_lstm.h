// The float32 LSTM for small cells on CPUs with AVX-512: recur's own loop, not a oneDNN
// primitive. oneDNN 2.6's RNN primitives pay about 1.5 us per time step whatever the cell's
// size (its brgemm dispatch and separate element-wise pass per step), so a cell of a few
// thousand weights, as tagging, language and streaming models use, spends most of its time
// there: models/packed_bilstm_tagger (H=24) ran at 1.7 us a step where the arithmetic takes
// 0.1 us. This kernel does each step in one pass per block of four rows: the gates of the
// block accumulated in registers over X and h (W and R packed at load, transposed so that a
// step streams each weight row once for the four rows), then the cell update on them. Sequence
// lengths are native: each row walks its own length, the reverse direction from its own end.
//
// It takes the LSTM nodes the oneDNN provider claims that have default activations, constant
// weights and a cell below kSmallLstmMaxMacs multiply-adds a row-step; `onednn.impl` other than
// auto sends them to oneDNN's primitive again. --explain says which ran.
#pragma once

#include <memory>
#include <string>

#include "providers/onednn/common/dnnl_util.h"
#include "runtime/provider/kernel.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::onednn {

// The largest cell, in multiply-adds per row and step (4H(I+H)), that takes the small kernel:
// H=128 with I=128. Above it oneDNN's primitive is as fast per step and threads better.
inline constexpr int64_t kSmallLstmMaxMacs = 4 * 128 * 256;

// Why the LSTM node of `ctx` does not take the small-cell kernel, or "" when it does.
std::string small_lstm_declined(const CompileContext& ctx, const RnnSpec& spec,
                                const OnednnOptions& o);

Result<std::unique_ptr<Kernel>> create_small_lstm_kernel(CompileContext& ctx, RnnSpec spec,
                                                         const OnednnOptions& o);

}  // namespace recur::onednn
