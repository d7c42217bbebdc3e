// recur::StackedRNN (runtime/rnn/stacked_rnn.h), layer by layer with the reference RNN kernel:
// each layer is the single-layer node it was before fusion, and the glue between layers
// (Squeeze, or Transpose + Reshape for two directions) is done here.
#include <cstring>

#include "providers/reference/rnn/rnn_common.h"
#include "runtime/core/copy_bytes.h"
#include "runtime/rnn/stacked_rnn.h"

namespace recur::reference::rnn {

namespace {

// Local frame slots of one layer's run.
enum Slot : ValueId { kSX = 0, kSW, kSR, kSB, kSLens, kSH0, kSC0, kSY, kSYh, kSYc, kSlots };

class StackedRnnKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(CompileContext& ctx);
  Status run(KernelContext& ctx) const override;

 private:
  StackedRnnSpec spec_;
  std::vector<Node> layers_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
};

Result<std::unique_ptr<Kernel>> StackedRnnKernel::create(CompileContext& ctx) {
  auto k = std::make_unique<StackedRnnKernel>();
  RECUR_ASSIGN_OR_RETURN(k->spec_, parse_stacked_rnn(ctx.node()));
  for (int l = 0; l < k->spec_.num_layers; ++l)
    k->layers_.push_back(stacked_layer_node(ctx.node(), l));
  const CompileContext::SubgraphCompiler none =
      [](const Graph&, const Node& owner) -> Result<std::shared_ptr<const SubgraphPlan>> {
    return internal_error(owner.describe() + ": an RNN layer has no subgraphs");
  };
  for (int l = 0; l < k->spec_.num_layers; ++l) {
    CompileContext lctx(k->layers_[static_cast<size_t>(l)], ctx.graph(), ctx.provider(),
                        ctx.options(), none);
    RECUR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, create_rnn_kernel(lctx));
    k->kernels_.push_back(std::move(kernel));
    // The layer kernel keeps its own copies of the constant weights it packed.
    for (size_t i : lctx.released_inputs()) {
      if (i == kRnnW || i == kRnnR || i == kRnnB) {
        ctx.release_input(stacked_input(l, static_cast<RnnInput>(i)));
      }
    }
  }
  ctx.note("run layer by layer (" + std::to_string(k->spec_.num_layers) + " " +
           k->layers_.front().op_type + " layers)");
  return std::unique_ptr<Kernel>(std::move(k));
}

// Y [T,D,N,H] as the next layer's X [T,N,D*H].
Result<Tensor> next_input(const KernelContext& ctx, const Tensor& y) {
  const int64_t T = y.dim(0), D = y.dim(1), N = y.dim(2), H = y.dim(3);
  if (D == 1) return y.reshaped({T, N, H});
  Tensor x = Tensor::empty(y.dtype(), {T, N, D * H});
  const size_t e = dtype_size(y.dtype());
  const auto* src = static_cast<const char*>(y.raw_data());
  auto* dst = static_cast<char*>(x.raw_data());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = 0; d < D; ++d)
      for (int64_t n = 0; n < N; ++n)
        copy_bytes(dst + static_cast<size_t>(((t * N + n) * D + d) * H) * e,
                   src + static_cast<size_t>(((t * D + d) * N + n) * H) * e,
                   static_cast<size_t>(H) * e);
  return x;
}

Status StackedRnnKernel::run(KernelContext& ctx) const {
  const Tensor* x = ctx.input(0);
  if (!x) return ctx.error(ErrorCode::kInvalidArgument, "input X is missing");
  Tensor layer_x = *x;
  for (int l = 0; l < spec_.num_layers; ++l) {
    std::vector<Tensor> frame(kSlots);
    frame[kSX] = layer_x;
    auto put = [&](Slot s, size_t i) {
      if (const Tensor* t = ctx.input(i)) frame[s] = *t;
    };
    put(kSW, stacked_input(l, kRnnW));
    put(kSR, stacked_input(l, kRnnR));
    put(kSB, stacked_input(l, kRnnB));
    put(kSLens, 1);
    put(kSH0, stacked_input(l, kRnnInitialH));
    put(kSC0, stacked_input(l, kRnnInitialC));
    const ValueId ins[] = {kSX, kSW, kSR, kSB, kSLens, kSH0, kSC0};
    const bool lstm = spec_.spec.cell == RnnCell::kLstm;
    const ValueId outs[] = {
        kSY, ctx.output_requested(stacked_output(l, kRnnYh)) ? kSYh : kNoValue,
        lstm && ctx.output_requested(stacked_output(l, kRnnYc)) ? kSYc : kNoValue};
    KernelContext lctx(layers_[static_cast<size_t>(l)], frame, ins, {}, outs, Device::cpu(),
                       ctx.env());
    RECUR_RETURN_IF_ERROR(kernels_[static_cast<size_t>(l)]->run(lctx));
    if (frame[kSYh].defined())
      RECUR_RETURN_IF_ERROR(ctx.set_output(stacked_output(l, kRnnYh), frame[kSYh]));
    if (frame[kSYc].defined())
      RECUR_RETURN_IF_ERROR(ctx.set_output(stacked_output(l, kRnnYc), frame[kSYc]));
    if (l + 1 == spec_.num_layers) return ctx.set_output(0, frame[kSY]);
    RECUR_ASSIGN_OR_RETURN(layer_x, next_input(ctx, frame[kSY]));
  }
  return ok_status();
}

}  // namespace

void register_stacked_rnn(Registrar& r) {
  r.add({.op_type = kStackedRnnOp,
         .domain = kStackedRnnDomain,
         .since = 1,
         .create = &StackedRnnKernel::create},
        infer_stacked_rnn);
}

}  // namespace recur::reference::rnn
