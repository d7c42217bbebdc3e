// recur::FromBlocked: float32 [N, C/b, spatial..., b] back to [N, C, spatial...]; the copy is
// to_blocked.cc's (channel_blocks.h).
#include "providers/onednn/kernels.h"
#include "providers/onednn/tensor/channel_blocks.h"
#include "runtime/graph/blocked.h"

namespace recur::onednn {

void register_from_blocked(KernelRegistry& r) {
  r.add({.op_type = kFromBlockedOp,
         .domain = kBlockedDomain,
         .since = 1,
         .create = [](CompileContext& ctx) { return make_channel_blocks(ctx, false); },
         .claim = [](const Node& n, const Graph& g) { return claim_channel_blocks(n, g, false); }});
}

}  // namespace recur::onednn
