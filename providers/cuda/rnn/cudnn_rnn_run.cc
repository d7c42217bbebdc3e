// The cuDNN RNN kernel's run: input checks, outputs, the layers' states in cuDNN's [L*D,N,H]
// order, and the calls that depend on this run's sequence lengths.
#include <cstdint>
#include <utility>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/rnn/cudnn_rnn_kernel.h"
#include "providers/cuda/rnn/cudnn_weight_space.h"
#include "providers/cuda/rnn/rnn_kernels.h"

namespace recur::cuda {

// execute_cudnn_run's device side: scratch on the run's stream, the CUDA kernels that reorder
// data, and cudnnRNNForward with the persistent algorithm where one was accepted.
class CudaRnnBackend final : public CudnnRunBackend {
 public:
  CudaRnnBackend(const CudnnRnnKernel& k, StreamContext& sc, cudnnHandle_t handle,
                 const ShapePlan& sp, const void* weights)
      : k_(k), sc_(sc), handle_(handle), sp_(sp), weights_(weights) {}

  Result<void*> scratch(int64_t elems) override {
    RECUR_ASSIGN_OR_RETURN(
        std::shared_ptr<void> p,
        allocate_device(static_cast<size_t>(elems) * k_.config_.elem_size(), k_.device_));
    keep_.push_back(p);
    return p.get();
  }

  Status reverse_sequences(const void* src, void* dst, int64_t V, const CudnnRunPlan& p) override {
    RECUR_CUDA_CHECK(launch_reverse_sequences(src, dst, k_.config_.elem_size(), p.layout, p.T, p.N,
                                              V, p.cudnn_lengths.data(), sc_.stream()));
    return ok_status();
  }

  Status bidir_to_onnx(const void* src, void* dst, const CudnnRunPlan& p) override {
    RECUR_CUDA_CHECK(
        launch_bidir_to_onnx(src, dst, k_.config_.elem_size(), p.T, p.N, p.H, sc_.stream()));
    return ok_status();
  }

  Status transpose_states(const void* src, void* dst, int64_t A, int64_t B, int64_t H) override {
    RECUR_CUDA_CHECK(
        launch_transpose_states(src, dst, k_.config_.elem_size(), A, B, H, sc_.stream()));
    return ok_status();
  }

  Status mask_y(void* y, const CudnnRunPlan& p) override {
    RECUR_CUDA_CHECK(launch_mask_y(y, k_.config_.elem_size(), p.layout, p.T, p.D, p.N, p.H,
                                   p.lengths.data(), sc_.stream()));
    return ok_status();
  }

  Status zero(void* dst, int64_t offset, int64_t count) override {
    const size_t e = k_.config_.elem_size();
    RECUR_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(dst) + static_cast<size_t>(offset) * e, 0,
                                     static_cast<size_t>(count) * e, sc_.stream()));
    return ok_status();
  }

  Status forward(const CudnnForwardArgs& a, const CudnnRunPlan& p) override {
    RECUR_ASSIGN_OR_RETURN(cudnnRNNDescriptor_t desc, k_.desc_for(sc_, handle_));
    cudnnRNNDataDescriptor_t xd = sp_.x_full.get(), yd = sp_.y_full.get();
    size_t work_bytes = sp_.workspace;
    if (!p.full_lengths) {
      // The only descriptor setup a run does: it depends on this run's lengths. The
      // descriptors belong to the run's stream, never to two runs at once.
      RECUR_ASSIGN_OR_RETURN(xd, sc_.rnn_data_descriptor(0));
      RECUR_ASSIGN_OR_RETURN(yd, sc_.rnn_data_descriptor(1));
      RECUR_RETURN_IF_ERROR(
          set_data_desc(xd, k_.config_, p.layout, p.T, p.N, p.I, p.cudnn_lengths.data()));
      RECUR_RETURN_IF_ERROR(
          set_data_desc(yd, k_.config_, p.layout, p.T, p.N, p.D * p.H, p.cudnn_lengths.data()));
      size_t reserve = 0;
      RECUR_CUDA_CHECK(cudnnGetRNNTempSpaceSizes(handle_, desc, CUDNN_FWD_MODE_INFERENCE, xd,
                                                 &work_bytes, &reserve));
    }
    if (p.full_lengths && sp_.persist_ok.load()) {
      RECUR_ASSIGN_OR_RETURN(cudnnRNNDescriptor_t pd,
                             k_.desc_for(sc_, handle_, sp_.persist_algo, sp_.N));
      RECUR_ASSIGN_OR_RETURN(void* work, workspace(sp_.persist_workspace));
      const cudnnStatus_t st = call(pd, xd, yd, a, work, sp_.persist_workspace);
      if (st == CUDNN_STATUS_SUCCESS) return ok_status();
      if (!is_not_supported(st)) return cudnn_error(st, "cudnnRNNForward");
      sp_.persist_ok = false;  // STANDARD from now on for this shape
    }
    RECUR_ASSIGN_OR_RETURN(void* work, workspace(work_bytes));
    RECUR_CUDA_CHECK(call(desc, xd, yd, a, work, work_bytes));
    return ok_status();
  }

 private:
  Result<void*> workspace(size_t bytes) {
    if (bytes == 0) return static_cast<void*>(nullptr);
    RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> p, allocate_device(bytes, k_.device_));
    keep_.push_back(p);
    return p.get();
  }

  cudnnStatus_t call(cudnnRNNDescriptor_t desc, cudnnRNNDataDescriptor_t xd,
                     cudnnRNNDataDescriptor_t yd, const CudnnForwardArgs& a, void* work,
                     size_t work_bytes) {
    // devSeqLengths is null: since cuDNN 8.9.1 inference reads the lengths from the data
    // descriptors, so nothing is uploaded.
    return cudnnRNNForward(handle_, desc, CUDNN_FWD_MODE_INFERENCE, nullptr, xd, a.x, yd, a.y,
                           sp_.h_desc.get(), a.hx, a.hy, sp_.h_desc.get(), a.cx, a.cy,
                           k_.weight_bytes_, weights_, work_bytes, work, 0, nullptr);
  }

  const CudnnRnnKernel& k_;
  StreamContext& sc_;
  cudnnHandle_t handle_;
  const ShapePlan& sp_;
  const void* weights_;
  std::vector<std::shared_ptr<void>> keep_;  // freed on the run's stream, in order
};

Status CudnnRnnKernel::run(KernelContext& ctx) const {
  auto* state = dynamic_cast<CudaRunState*>(ctx.env().provider_state);
  if (!state)
    return ctx.error(ErrorCode::kInternal, "no CUDA run state (begin_run was not called)");
  RECUR_RETURN_IF_ERROR(state->status());
  DeviceGuard guard(device_);
  RECUR_RETURN_IF_ERROR(guard.status());
  StreamContext& sc = state->context();
  RECUR_ASSIGN_OR_RETURN(cudnnHandle_t handle, sc.cudnn());

  RECUR_ASSIGN_OR_RETURN(RnnDims dims, check_inputs(ctx));
  const int64_t T = dims.seq_length, N = dims.batch;
  RunIo io;
  RECUR_RETURN_IF_ERROR(allocate_outputs(ctx, dims, io));
  RECUR_RETURN_IF_ERROR(gather_states(ctx, sc, dims, io));
  if (T == 0 || N == 0) return zero_outputs(sc, dims, io);

  const Tensor* lens = ctx.input(lens_pos());
  CudnnRunPlan plan = plan_cudnn_run(spec_, dims, lens ? lens->data<int32_t>() : nullptr, io.want_y,
                                     io.want_yh, io.want_yc);
  plan.L = layers_;
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<const ShapePlan> sp, shape_plan(handle, T, N));

  const void* weights = weights_.get();
  std::shared_ptr<void> run_weights;
  if (!weights) {
    RECUR_ASSIGN_OR_RETURN(run_weights, repack_weights(ctx, sc));
    weights = run_weights.get();
  }
  CudaRnnBackend backend(*this, sc, handle, *sp, weights);
  RECUR_RETURN_IF_ERROR(execute_cudnn_run(plan, io.buf, backend));
  return scatter_states(sc, dims, io);
}

// Shapes, types and devices of X, the weights and the initial states.
Result<RnnDims> CudnnRnnKernel::check_inputs(KernelContext& ctx) const {
  const Tensor* x = ctx.input(kRnnX);
  const Tensor* w = ctx.input(in_pos(0, kRnnW));
  const Tensor* r = ctx.input(in_pos(0, kRnnR));
  const Tensor* b = ctx.input(in_pos(0, kRnnB));
  const Tensor* lens = ctx.input(lens_pos());
  const Tensor* h0 = ctx.input(in_pos(0, kRnnInitialH));
  const Tensor* c0 = ctx.input(in_pos(0, kRnnInitialC));
  if (lens && !lens->is_cpu()) {
    return ctx.error(ErrorCode::kInternal, "sequence_lens is expected in host memory");
  }
  const bool repacked = weights_ != nullptr;
  RECUR_ASSIGN_OR_RETURN(
      RnnDims dims,
      check_rnn_inputs(ctx.node(), spec_, x, repacked ? &w_shape_ : w, repacked ? &r_shape_ : r,
                       repacked ? (has_b_ ? &b_shape_ : nullptr) : b, lens, h0, c0, nullptr));
  if (x->dtype() != config_.dtype) {
    return ctx.error(ErrorCode::kInvalidArgument, "X is " + std::string(dtype_name(x->dtype())) +
                                                      " but the model declared " +
                                                      std::string(dtype_name(config_.dtype)));
  }
  if (dims.input_size != config_.geometry.input_size) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "X has input size " + std::to_string(dims.input_size) + ", W expects " +
                         std::to_string(config_.geometry.input_size));
  }
  const int64_t N = dims.batch, D = dims.directions, H = dims.hidden;
  // cuDNN's descriptors take int: the claim checks static dimensions, a dynamic X is checked
  // here (T, N, the width D*H and the states' stride N*H).
  for (const auto& [what, v] :
       {std::pair{"the sequence length", dims.seq_length}, std::pair{"the batch size", N},
        std::pair{"D*hidden_size", D * H}, std::pair{"batch_size*hidden_size", N * H}}) {
    if (v > INT32_MAX) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       std::string(what) + " " + std::to_string(v) + " is over cuDNN's int range");
    }
  }
  const Shape s_shape = spec_.layout == 0 ? Shape{D, N, H} : Shape{N, D, H};
  for (int l = 0; l < layers_; ++l) {
    for (RnnInput which : {kRnnInitialH, kRnnInitialC}) {
      const Tensor* t = ctx.input(in_pos(l, which));
      if (!t) continue;
      if (t->shape() != s_shape || t->dtype() != config_.dtype) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         std::string(which == kRnnInitialH ? "initial_h" : "initial_c") +
                             " of layer " + std::to_string(l) + " must be " +
                             std::string(dtype_name(config_.dtype)) + shape_to_string(s_shape) +
                             ", got " + shape_to_string(t->shape()));
      }
      if (t->device() != ctx.device()) {
        return ctx.error(ErrorCode::kInternal, "an initial state is on " + t->device().to_string());
      }
    }
  }
  if (x->device() != ctx.device()) {
    return ctx.error(ErrorCode::kInternal, "X is on " + x->device().to_string() + ", expected " +
                                               ctx.device().to_string());
  }
  return dims;
}

Result<void*> CudnnRnnKernel::scratch(RunIo& io, int64_t elems) const {
  RECUR_ASSIGN_OR_RETURN(
      std::shared_ptr<void> q,
      allocate_device(static_cast<size_t>(elems) * config_.elem_size(), device_));
  io.keep.push_back(q);
  return q.get();
}

// Y, and each requested layer's Y_h and Y_c.
Status CudnnRnnKernel::allocate_outputs(KernelContext& ctx, const RnnDims& dims, RunIo& io) const {
  const int64_t T = dims.seq_length, N = dims.batch, D = dims.directions, H = dims.hidden;
  const int64_t L = layers_;
  const Shape y_shape = spec_.layout == 0 ? Shape{T, D, N, H} : Shape{N, T, D, H};
  const Shape s_shape = spec_.layout == 0 ? Shape{D, N, H} : Shape{N, D, H};
  CudnnRunBuffers& buf = io.buf;
  buf.x = ctx.input(kRnnX)->raw_data();
  const bool lstm = spec_.cell == RnnCell::kLstm;
  for (int l = 0; l < L; ++l) {
    io.want_yh |= ctx.output_requested(out_pos(l, kRnnYh));
    io.want_yc |= lstm && ctx.output_requested(out_pos(l, kRnnYc));
  }
  io.want_y = ctx.output_requested(kRnnY);
  if (io.want_y) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnY, config_.dtype, y_shape));
    buf.y = t->raw_data();
  }
  io.yh_out.assign(static_cast<size_t>(L), nullptr);
  io.yc_out.assign(static_cast<size_t>(L), nullptr);
  for (int l = 0; l < L; ++l) {
    if (ctx.output_requested(out_pos(l, kRnnYh))) {
      RECUR_ASSIGN_OR_RETURN(io.yh_out[static_cast<size_t>(l)],
                             ctx.allocate_output(out_pos(l, kRnnYh), config_.dtype, s_shape));
    }
    if (lstm && ctx.output_requested(out_pos(l, kRnnYc))) {
      RECUR_ASSIGN_OR_RETURN(io.yc_out[static_cast<size_t>(l)],
                             ctx.allocate_output(out_pos(l, kRnnYc), config_.dtype, s_shape));
    }
  }
  return ok_status();
}

// One layer: the node's own states. Several: every layer's states one after the other
// ([L*D,N,H], cuDNN's order), gathered from the per-layer inputs into scratch.
Status CudnnRnnKernel::gather_states(KernelContext& ctx, StreamContext& sc, const RnnDims& dims,
                                     RunIo& io) const {
  CudnnRunBuffers& buf = io.buf;
  if (!stacked_) {
    const Tensor* h0 = ctx.input(in_pos(0, kRnnInitialH));
    const Tensor* c0 = ctx.input(in_pos(0, kRnnInitialC));
    buf.h0 = h0 ? h0->raw_data() : nullptr;
    buf.c0 = c0 ? c0->raw_data() : nullptr;
    buf.yh = io.yh_out[0] ? io.yh_out[0]->raw_data() : nullptr;
    buf.yc = io.yc_out[0] ? io.yc_out[0]->raw_data() : nullptr;
    return ok_status();
  }
  const int64_t L = layers_;
  const int64_t layer_state = dims.directions * dims.batch * dims.hidden;
  const size_t e = config_.elem_size();
  const bool lstm = spec_.cell == RnnCell::kLstm;
  for (RnnInput which : {kRnnInitialH, kRnnInitialC}) {
    bool any = false;
    for (int l = 0; l < L; ++l) any |= ctx.input(in_pos(l, which)) != nullptr;
    if (!any || (which == kRnnInitialC && !lstm)) continue;
    RECUR_ASSIGN_OR_RETURN(void* all, scratch(io, L * layer_state));
    for (int l = 0; l < L; ++l) {
      char* dst = static_cast<char*>(all) + static_cast<size_t>(l * layer_state) * e;
      const Tensor* t = ctx.input(in_pos(l, which));
      if (t) {
        RECUR_CUDA_CHECK(cudaMemcpyAsync(dst, t->raw_data(), static_cast<size_t>(layer_state) * e,
                                         cudaMemcpyDeviceToDevice, sc.stream()));
      } else {
        RECUR_CUDA_CHECK(
            cudaMemsetAsync(dst, 0, static_cast<size_t>(layer_state) * e, sc.stream()));
      }
    }
    (which == kRnnInitialH ? buf.h0 : buf.c0) = all;
  }
  if (io.want_yh) {
    RECUR_ASSIGN_OR_RETURN(buf.yh, scratch(io, L * layer_state));
  }
  if (io.want_yc) {
    RECUR_ASSIGN_OR_RETURN(buf.yc, scratch(io, L * layer_state));
  }
  return ok_status();
}

// No step runs: every output is zeros (a length of 0 gives zeros).
Status CudnnRnnKernel::zero_outputs(StreamContext& sc, const RnnDims& dims, const RunIo& io) const {
  const int64_t T = dims.seq_length, N = dims.batch, D = dims.directions, H = dims.hidden;
  if (io.buf.y && T * D * N * H != 0) {
    RECUR_CUDA_CHECK(cudaMemsetAsync(
        io.buf.y, 0, static_cast<size_t>(T * D * N * H) * config_.elem_size(), sc.stream()));
  }
  for (auto& v : {io.yh_out, io.yc_out}) {
    for (Tensor* t : v) {
      if (t && t->nbytes())
        RECUR_CUDA_CHECK(cudaMemsetAsync(t->raw_data(), 0, t->nbytes(), sc.stream()));
    }
  }
  return ok_status();
}

// Weights that are graph inputs: repacked on the device, into a zeroed weight space.
Result<std::shared_ptr<void>> CudnnRnnKernel::repack_weights(KernelContext& ctx,
                                                             StreamContext& sc) const {
  for (int l = 0; l < layers_; ++l) {
    for (RnnInput which : {kRnnW, kRnnR, kRnnB}) {
      const Tensor* t = ctx.input(in_pos(l, which));
      if (t && t->device() != ctx.device()) {
        return ctx.error(ErrorCode::kInternal, "a weight input is on " + t->device().to_string());
      }
    }
  }
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> space, allocate_device(weight_bytes_, device_));
  auto source = [&](int layer, CudnnWeightCopy::Source tensor) -> const void* {
    const RnnInput which = tensor == CudnnWeightCopy::Source::kW   ? kRnnW
                           : tensor == CudnnWeightCopy::Source::kR ? kRnnR
                                                                   : kRnnB;
    const Tensor* src = ctx.input(in_pos(layer, which));
    return src ? src->raw_data() : nullptr;
  };
  RECUR_RETURN_IF_ERROR(fill_weight_space_on_device(weight_plan_, config_.elem_size(), source,
                                                    space.get(), weight_bytes_, sc.stream()));
  return space;
}

// Stacked: each requested layer's Y_h/Y_c out of the [L*D,N,H] buffers.
Status CudnnRnnKernel::scatter_states(StreamContext& sc, const RnnDims& dims,
                                      const RunIo& io) const {
  if (!stacked_) return ok_status();
  const int64_t layer_state = dims.directions * dims.batch * dims.hidden;
  const size_t e = config_.elem_size();
  for (int l = 0; l < layers_; ++l) {
    for (auto [out, all] : {std::pair<Tensor*, void*>{io.yh_out[static_cast<size_t>(l)], io.buf.yh},
                            {io.yc_out[static_cast<size_t>(l)], io.buf.yc}}) {
      if (!out || !all) continue;
      RECUR_CUDA_CHECK(cudaMemcpyAsync(
          out->raw_data(), static_cast<char*>(all) + static_cast<size_t>(l * layer_state) * e,
          static_cast<size_t>(layer_state) * e, cudaMemcpyDeviceToDevice, sc.stream()));
    }
  }
  return ok_status();
}

}  // namespace recur::cuda
