// The copies between float32 X [N, C, spatial...] and its channel-blocked form
// [N, C/b, spatial..., b] (runtime/graph/blocked.h) that bound a chain of blocked convolutions:
// per block of channels a [b, S] <-> [S, b] transpose (channels_last.h), split among threads.
// oneDNN's reorder to nChw16c ran on one thread at 5 GB/s.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::onednn {

// The kernel of recur::ToBlocked (to_blocked) or recur::FromBlocked.
Result<std::unique_ptr<Kernel>> make_channel_blocks(CompileContext& ctx, bool to_blocked);

// float32 input of known rank (3 or more; 4 or more blocked), with AVX-512.
Claim claim_channel_blocks(const Node& node, const Graph& graph, bool to_blocked);

}  // namespace recur::onednn
