// recur::ToBlocked: float32 X [N, C, spatial...] to [N, C/b, spatial..., b] (channel_blocks.h).
// The copy both ways lives here; from_blocked.cc registers the other direction.
#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/channels_last.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"
#include "providers/onednn/tensor/channel_blocks.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/graph/blocked.h"

namespace recur::onednn {

namespace {

class ChannelBlocksKernel final : public Kernel {
 public:
  ChannelBlocksKernel(bool to_blocked, int64_t block, Threads threads)
      : to_blocked_(to_blocked), block_(block), threads_(threads) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "input X is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN kernel runs float32 on the host");
    }
    const Shape& in = x->shape();
    const size_t min_rank = to_blocked_ ? 3 : 4;
    const int64_t b = to_blocked_ ? block_ : (in.size() >= min_rank ? in.back() : 0);
    if (in.size() < min_rank || b < 1 || (to_blocked_ && in[1] % b != 0)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X " + shape_to_string(in) +
                           (to_blocked_ ? " must have rank 3 or more and whole blocks of " +
                                              std::to_string(block_) + " channels"
                                        : " must have rank 4 or more: [N, C/b, spatial..., b]"));
    }
    Shape out = in;
    if (to_blocked_) {
      out[1] = in[1] / b;
      out.push_back(b);
    } else {
      out.pop_back();
      out[1] = in[1] * b;
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    // Per block of channels: [b, S] -> [S, b] into the blocked form, the reverse out of it.
    const int64_t planes = in[0] * (to_blocked_ ? in[1] / b : in[1]);
    const int64_t S = y->numel() / (planes * b);
    transpose_planes(x->data<float>(), y->data<float>(), planes, to_blocked_ ? b : S,
                     to_blocked_ ? S : b, threads_.max, threads_.shrink);
    return ok_status();
  }

 private:
  bool to_blocked_;
  int64_t block_;  // ToBlocked's; FromBlocked reads it from X
  Threads threads_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_channel_blocks(CompileContext& ctx, bool to_blocked) {
  AttrReader a(ctx.node());
  const int64_t block = to_blocked ? a.require_int(kBlockAttr) : 0;
  RECUR_RETURN_IF_ERROR(a.status());
  if (to_blocked && block < 1) return ctx.error(ErrorCode::kInvalidModel, "block must be positive");
  return std::unique_ptr<Kernel>(
      std::make_unique<ChannelBlocksKernel>(to_blocked, block, options_of(ctx).team()));
}

Claim claim_channel_blocks(const Node& node, const Graph& graph, bool to_blocked) {
  if (!avx512::have_avx512()) return Claim::decline(cpu::why_not(cpu::Feature::kAvx512));
  if (!node.has_input(0)) return Claim::decline("input X is missing");
  Claim c = claim_float32_input(node, graph);
  if (!c.yes) return c;
  const TypeInfo& t = graph.value(node.inputs[0]).type;
  if (t.shape && t.shape->size() < (to_blocked ? 3u : 4u)) {
    return Claim::decline("input of rank " + std::to_string(t.shape->size()));
  }
  return Claim::accept();
}

void register_to_blocked(KernelRegistry& r) {
  r.add({.op_type = kToBlockedOp,
         .domain = kBlockedDomain,
         .since = 1,
         .create = [](CompileContext& ctx) { return make_channel_blocks(ctx, true); },
         .claim = [](const Node& n, const Graph& g) { return claim_channel_blocks(n, g, true); }});
}

}  // namespace recur::onednn
