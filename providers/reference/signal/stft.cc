// STFT (opset 17): signal [batch, length, 1 or 2] (or [batch, length], real), frame_step (scalar),
// optional window [frame_length], optional frame_length (scalar; taken from the window when
// absent). Frame f covers samples [f * step, f * step + frame_length), multiplied by the window;
// output [batch, frames, bins, 2] with frames = 1 + (length - frame_length) / step and bins =
// frame_length / 2 + 1 when onesided (the default), frame_length otherwise.
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_util.h"
#include "providers/reference/signal/signal_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* step_t, required_input(ctx, 1));
    const Tensor* window = ctx.input(2);
    const Tensor* length_t = ctx.input(3);
    // [batch, length] is a real signal too, as ONNX Runtime takes it.
    if ((x->rank() != 3 && x->rank() != 2) ||
        (x->rank() == 3 && x->dim(2) != 1 && x->dim(2) != 2)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "the signal must have shape [batch, length, 1 or 2] or [batch, length], "
                       "got " +
                           shape_to_string(x->shape()));
    }
    auto step = read_scalar_int(*step_t, "frame_step");
    if (!step.ok()) return step.status().with_context(ctx.node().describe());
    int64_t frame = -1;
    if (length_t) {
      auto v = read_scalar_int(*length_t, "frame_length");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      frame = *v;
    }
    std::vector<double> w;
    if (window) {
      if (window->rank() != 1 || (frame >= 0 && window->dim(0) != frame)) {
        return ctx.error(ErrorCode::kInvalidArgument, "the window has shape " +
                                                          shape_to_string(window->shape()) +
                                                          " but must be [frame_length]");
      }
      frame = window->dim(0);
      auto v = read_as_double(*window, "window");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      w = std::move(v).value();
    }
    const int64_t batch = x->dim(0), len = x->dim(1), comps = x->rank() == 3 ? x->dim(2) : 1;
    if (frame < 1 || frame > len || *step < 1) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "frame_length " + std::to_string(frame) + " and frame_step " +
                           std::to_string(*step) + " do not fit a signal of length " +
                           std::to_string(len) + " (a window or frame_length is needed)");
    }
    const int64_t frames = 1 + (len - frame) / *step;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    RECUR_ASSIGN_OR_RETURN(Tensor * y,
                           allocate_checked(ctx, 0, x->dtype(), {batch, frames, bins, 2}));
    auto xs = read_as_double(*x, "signal");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    std::vector<double> ys(static_cast<size_t>(y->numel()));
    const DftPlan plan(frame, false, frame, bins);
    std::vector<std::complex<double>> line(static_cast<size_t>(frame)), result;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t t = 0; t < frame; ++t) {
          const size_t at = static_cast<size_t>((b * len + f * *step + t) * comps);
          const double scale = w.empty() ? 1.0 : w[static_cast<size_t>(t)];
          line[static_cast<size_t>(t)] = {(*xs)[at] * scale,
                                          comps == 2 ? (*xs)[at + 1] * scale : 0.0};
        }
        plan.run(line, bins, &result);
        for (int64_t k = 0; k < bins; ++k) {
          const size_t at = static_cast<size_t>(((b * frames + f) * bins + k) * 2);
          ys[at] = result[static_cast<size_t>(k)].real();
          ys[at + 1] = result[static_cast<size_t>(k)].imag();
        }
      }
    }
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  bool onesided_;
};

}  // namespace

void register_stft(Registrar& r) {
  r.add({.op_type = "STFT",
         .since = 17,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(c.node());
           const int64_t onesided = attrs.get_int("onesided", 1);
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::make_unique<StftKernel>(onesided != 0);
         }});
}

}  // namespace recur::reference
