// ONNX LSTM, GRU and RNN on cudnnRNNForward (cuDNN 9, v8 API): LINEAR_INPUT, DOUBLE_BIAS or
// NO_BIAS, projSize = hiddenSize, one layer, padded unpacked IO (SEQ_MAJOR_UNPACKED for
// layout=0, BATCH_MAJOR_UNPACKED for layout=1), sequence lengths from host memory.
//
// Compile: descriptors, the weight space (repacked once for constant weights), and, when X
// has a static shape, the per-shape descriptors and workspace size. The run is in
// cudnn_rnn_run.cc, the claim in cudnn_rnn_claim.cc, the weight space in cudnn_weight_space.cc.
#include "providers/cuda/rnn/cudnn_rnn.h"

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_options.h"
#include "providers/cuda/rnn/cudnn_rnn_kernel.h"
#include "providers/cuda/rnn/cudnn_weight_space.h"

namespace recur::cuda {

GpuTraits read_gpu_traits(int device) {
  GpuTraits gpu;
  int smem = 0, coop = 0;
  if (cudaDeviceGetAttribute(&gpu.major, cudaDevAttrComputeCapabilityMajor, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&gpu.minor, cudaDevAttrComputeCapabilityMinor, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&gpu.multiprocessors, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device) != cudaSuccess) {
    (void)cudaGetLastError();  // a failed query leaves nothing for the next CUDA call to report
    return {};
  }
  gpu.shared_memory_optin = smem;
  gpu.cooperative_launch = coop != 0;
  return gpu;
}

Result<cudnnRNNDescriptor_t> CudnnRnnKernel::desc_for(const StreamContext& sc, cudnnHandle_t handle,
                                                      cudnnRNNAlgo_t algo, int64_t N) const {
  const DescKey key{&sc, algo, algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC ? N : 0};
  std::lock_guard lock(desc_mu_);
  auto it = stream_descs_.find(key);
  if (it != stream_descs_.end()) return it->second.get();
  RECUR_ASSIGN_OR_RETURN(RnnDesc d, make_rnn_desc(config_, algo, handle));
  if (algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC) {
    RECUR_CUDA_CHECK(cudnnBuildRNNDynamic(handle, d.get(), static_cast<int>(N)));
  }
  cudnnRNNDescriptor_t raw = d.get();
  stream_descs_.emplace(key, std::move(d));
  return raw;
}

Result<std::shared_ptr<const ShapePlan>> CudnnRnnKernel::shape_plan(cudnnHandle_t handle, int64_t T,
                                                                    int64_t N) const {
  {
    std::lock_guard lock(mu_);
    for (auto it = shapes_.begin(); it != shapes_.end(); ++it) {
      if ((*it)->T == T && (*it)->N == N) {
        if (it != shapes_.begin()) shapes_.splice(shapes_.begin(), shapes_, it);
        return shapes_.front();
      }
    }
  }
  // Built outside the lock: two runs may both build one; the one that comes second uses the
  // first one's, so that the cache holds each shape once.
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<const ShapePlan> sp, build_shape_plan(handle, T, N));
  std::lock_guard lock(mu_);
  for (const auto& have : shapes_)
    if (have->T == T && have->N == N) return have;
  shapes_.push_front(sp);
  if (shapes_.size() > kMaxShapes) shapes_.pop_back();  // in-flight runs keep their copy
  return sp;
}

Result<std::shared_ptr<const ShapePlan>> CudnnRnnKernel::build_shape_plan(cudnnHandle_t handle,
                                                                          int64_t T,
                                                                          int64_t N) const {
  auto sp = std::make_shared<ShapePlan>();
  sp->T = T;
  sp->N = N;
  const int64_t D = config_.geometry.directions, H = config_.geometry.hidden_size;
  const int64_t LD = config_.geometry.num_layers * D;
  RECUR_ASSIGN_OR_RETURN(sp->h_desc, new_tensor_desc());
  const int dims[3] = {static_cast<int>(LD), static_cast<int>(N), static_cast<int>(H)};
  const int strides[3] = {static_cast<int>(N * H), static_cast<int>(H), 1};
  RECUR_CUDA_CHECK(
      cudnnSetTensorNdDescriptor(sp->h_desc.get(), config_.data_type(), 3, dims, strides));
  cudnnRNNDataDescriptor_t xd = nullptr, yd = nullptr;
  RECUR_CUDA_CHECK(cudnnCreateRNNDataDescriptor(&xd));
  sp->x_full.reset(xd);
  RECUR_CUDA_CHECK(cudnnCreateRNNDataDescriptor(&yd));
  sp->y_full.reset(yd);
  const std::vector<int32_t> full(static_cast<size_t>(N), static_cast<int32_t>(T));
  RECUR_RETURN_IF_ERROR(
      set_data_desc(xd, config_, spec_.layout, T, N, config_.geometry.input_size, full.data()));
  RECUR_RETURN_IF_ERROR(set_data_desc(yd, config_, spec_.layout, T, N, D * H, full.data()));
  size_t reserve = 0;
  RECUR_CUDA_CHECK(cudnnGetRNNTempSpaceSizes(handle, desc_.get(), CUDNN_FWD_MODE_INFERENCE, xd,
                                             &sp->workspace, &reserve));
  if (weights_) RECUR_RETURN_IF_ERROR(try_persistent(handle, *sp));
  return std::shared_ptr<const ShapePlan>(std::move(sp));
}

// cuDNN's persistent algorithms need fixed lengths and DOUBLE_BIAS (docs/semantics.md). Each
// candidate (persistent_candidates) is tried in turn; any failure moves on to the next (not
// only "not supported": a bad parameter for this configuration, or cudnnBuildRNNDynamic's
// runtime compilation failing), and STANDARD is the last resort, since a persistent algorithm
// is only a speed-up. A candidate must lay the weight space out as STANDARD does, so one weight
// space serves both.
Status CudnnRnnKernel::try_persistent(cudnnHandle_t handle, ShapePlan& sp) const {
  for (PersistentAlgo choice :
       persistent_candidates(config_.geometry, config_.dtype, sp.N, persistent_, gpu_)) {
    const cudnnRNNAlgo_t algo =
        choice == PersistentAlgo::kStaticSmallH ? CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H
        : choice == PersistentAlgo::kStatic     ? CUDNN_RNN_ALGO_PERSIST_STATIC
                                                : CUDNN_RNN_ALGO_PERSIST_DYNAMIC;
    cudnnRNNDescriptor_t d = nullptr;
    RECUR_CUDA_CHECK(cudnnCreateRNNDescriptor(&d));
    RnnDesc desc(d);
    cudnnStatus_t st = set_rnn_desc(d, config_, algo, handle);
    if (st == CUDNN_STATUS_SUCCESS && algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC) {
      st = cudnnBuildRNNDynamic(handle, d, static_cast<int>(sp.N));
    }
    size_t bytes = 0;
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnGetRNNWeightSpaceSize(handle, d, &bytes);
    size_t work = 0, reserve = 0;
    if (st == CUDNN_STATUS_SUCCESS) {
      st = cudnnGetRNNTempSpaceSizes(handle, d, CUDNN_FWD_MODE_INFERENCE, sp.x_full.get(), &work,
                                     &reserve);
    }
    if (st != CUDNN_STATUS_SUCCESS) continue;
    if (bytes != weight_bytes_) continue;
    auto map = read_weight_map(handle, d, config_, weights_.get(), bytes);
    if (!map.ok() || !(*map == weight_map_)) continue;
    sp.persist_algo = algo;
    sp.persist_workspace = work;
    sp.persist_ok = true;
    return ok_status();
  }
  return ok_status();
}

// --- Compile -------------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> CudnnRnnKernel::create(CompileContext& ctx) {
  auto k = std::make_unique<CudnnRnnKernel>();
  RECUR_RETURN_IF_ERROR(k->parse_node(ctx));
  RECUR_RETURN_IF_ERROR(k->configure(ctx));
  ScopedStream scoped(k->device_);
  RECUR_RETURN_IF_ERROR(scoped.status());
  RECUR_ASSIGN_OR_RETURN(cudnnHandle_t handle, scoped.context().cudnn());
  // Held to the end of compile when the weights are not constant, so that its free is queued
  // after every call made with it.
  std::shared_ptr<void> space;
  RECUR_RETURN_IF_ERROR(k->prepare_weight_space(ctx, handle, space));
  k->note_choices(ctx);
  RECUR_RETURN_IF_ERROR(k->prepare_static_shape(ctx, handle));
  RECUR_RETURN_IF_ERROR(scoped.synchronize());
  return std::unique_ptr<Kernel>(std::move(k));
}

Status CudnnRnnKernel::parse_node(CompileContext& ctx) {
  const Node& node = ctx.node();
  stacked_ = node.domain == kStackedRnnDomain;
  if (stacked_) {
    RECUR_ASSIGN_OR_RETURN(StackedRnnSpec ss, parse_stacked_rnn(node));
    spec_ = ss.spec;
    layers_ = ss.num_layers;
  } else {
    RECUR_ASSIGN_OR_RETURN(spec_, RnnSpec::parse(node));
  }
  const Claim claim =
      stacked_ ? cudnn_stacked_rnn_claim(node, ctx.graph()) : cudnn_rnn_claim(node, ctx.graph());
  if (!claim.yes) return ctx.error(ErrorCode::kNotImplemented, claim.reason);
  return ok_status();
}

// The RNN configuration from the node, its input types and the provider's options; W, R and
// B are checked against it.
Status CudnnRnnKernel::configure(CompileContext& ctx) {
  const TypeInfo& wt = ctx.input_type(in_pos(0, kRnnW));
  const TypeInfo& rt = ctx.input_type(in_pos(0, kRnnR));
  const Shape ws = wt.static_shape(), rs = rt.static_shape();
  const CudaOptions& options = ctx.provider_options<CudaOptions>();
  RnnConfig& c = config_;
  c.dtype = ctx.input_type(kRnnX).dtype;
  c.tf32 = options.tf32;
  persistent_ = options.persistent;
  gpu_ = read_gpu_traits(options.device);
  c.relu =
      spec_.cell == RnnCell::kRnn && spec_.activations.front().kind == RnnActivation::Kind::kRelu;
  CudnnRnnGeometry& g = c.geometry;
  g.cell = spec_.cell;
  g.directions = spec_.num_directions();
  g.input_size = ws[2];
  g.hidden_size = spec_.hidden_size > 0 ? spec_.hidden_size : rs[2];
  g.num_layers = layers_;
  has_b_ = false;
  for (int l = 0; l < layers_; ++l) has_b_ |= ctx.has_input(in_pos(l, kRnnB));
  // Persistent algorithms need DOUBLE_BIAS; zero biases cost nothing.
  g.bias = has_b_ || persistent_ != CudaOptions::Persistent::kOff;
  const int64_t G = g.gates(), H = g.hidden_size, D = g.directions;
  for (int l = 0; l < layers_; ++l) {
    const Shape wl = ctx.input_type(in_pos(l, kRnnW)).static_shape();
    const Shape rl = ctx.input_type(in_pos(l, kRnnR)).static_shape();
    if (wl != Shape{D, G * H, g.layer_input_size(l)} || rl != Shape{D, G * H, H}) {
      return ctx.error(ErrorCode::kInvalidModel,
                       "W " + shape_to_string(wl) + " and R " + shape_to_string(rl) +
                           " do not match hidden_size " + std::to_string(H) +
                           (stacked_ ? " (layer " + std::to_string(l) + ")" : ""));
    }
    if (ctx.has_input(in_pos(l, kRnnB))) {
      const TypeInfo& bt = ctx.input_type(in_pos(l, kRnnB));
      if (bt.is_static() && bt.static_shape() != Shape{D, 2 * G * H}) {
        return ctx.error(ErrorCode::kInvalidModel, "B must have shape [" + std::to_string(D) + "," +
                                                       std::to_string(2 * G * H) + "], got " +
                                                       shape_to_string(bt.static_shape()));
      }
    }
  }
  w_shape_ = Tensor::borrow(nullptr, c.dtype, ws);
  r_shape_ = Tensor::borrow(nullptr, c.dtype, rs);
  b_shape_ = Tensor::borrow(nullptr, c.dtype, {D, 2 * G * H});
  device_ = ctx.provider().device().index;
  return ok_status();
}

// The weight space's size and map; constant weights are repacked into it now and released.
Status CudnnRnnKernel::prepare_weight_space(CompileContext& ctx, cudnnHandle_t handle,
                                            std::shared_ptr<void>& space) {
  const RnnConfig& c = config_;
  RECUR_ASSIGN_OR_RETURN(desc_, make_rnn_desc(c, CUDNN_RNN_ALGO_STANDARD, handle));
  RECUR_CUDA_CHECK(cudnnGetRNNWeightSpaceSize(handle, desc_.get(), &weight_bytes_));
  RECUR_ASSIGN_OR_RETURN(space, allocate_device(weight_bytes_, device_));
  RECUR_ASSIGN_OR_RETURN(weight_map_,
                         read_weight_map(handle, desc_.get(), c, space.get(), weight_bytes_));
  RECUR_ASSIGN_OR_RETURN(weight_plan_, plan_onnx_to_cudnn(weight_map_));

  HostLayerWeights onnx;
  bool all_constant = true;
  for (int l = 0; l < layers_; ++l) {
    const Tensor* w = ctx.constant_input(in_pos(l, kRnnW));
    const Tensor* r = ctx.constant_input(in_pos(l, kRnnR));
    const bool has_b = ctx.has_input(in_pos(l, kRnnB));
    const Tensor* b = has_b ? ctx.constant_input(in_pos(l, kRnnB)) : nullptr;
    all_constant = all_constant && w && r && (b || !has_b);
    onnx.w.push_back(w ? w->raw_data() : nullptr);
    onnx.r.push_back(r ? r->raw_data() : nullptr);
    onnx.b.push_back(b ? b->raw_data() : nullptr);
  }
  if (!all_constant) {
    ctx.note("W, R or B is not a constant: repacked into cuDNN's weight space on every run");
    return ok_status();
  }
  RECUR_RETURN_IF_ERROR(fill_weight_space_from_host(weight_plan_, c.elem_size(), onnx, space.get(),
                                                    weight_bytes_, device_));
  weights_ = std::move(space);
  for (int l = 0; l < layers_; ++l) {
    ctx.release_input(in_pos(l, kRnnW));
    ctx.release_input(in_pos(l, kRnnR));
    if (onnx.b[static_cast<size_t>(l)]) ctx.release_input(in_pos(l, kRnnB));
  }
  ctx.note("weights repacked into cuDNN's weight space at load (" + std::to_string(weight_bytes_) +
           " bytes on " + ctx.provider().device().to_string() + ")");
  return ok_status();
}

void CudnnRnnKernel::note_choices(CompileContext& ctx) {
  if (stacked_) {
    ctx.note("one cudnnRNNForward with numLayers=" + std::to_string(layers_));
  }
  if (!stacked_ && ctx.has_input(kRnnP)) {
    ctx.release_input(kRnnP);  // a constant of zeros (the claim checked): nothing to compute
    ctx.note("P is all zeros: peepholes dropped");
  }
  if (asked_persistent() && !weights_) {
    ctx.note("cudnn.persistent is on, but persistent algorithms need constant weights: STANDARD");
  }
}

// A static X shape: everything per-shape is prepared now.
Status CudnnRnnKernel::prepare_static_shape(CompileContext& ctx, cudnnHandle_t handle) {
  const TypeInfo& xt = ctx.input_type(kRnnX);
  if (!xt.is_static() || xt.rank() != 3) return ok_status();
  const Shape xs = xt.static_shape();
  const int64_t T = spec_.layout == 0 ? xs[0] : xs[1];
  const int64_t N = spec_.layout == 0 ? xs[1] : xs[0];
  if (T <= 0 || N <= 0) return ok_status();
  RECUR_ASSIGN_OR_RETURN(auto sp, shape_plan(handle, T, N));
  if (sp->persist_ok) {
    const char* algo = sp->persist_algo == CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H
                           ? "PERSIST_STATIC_SMALL_H"
                       : sp->persist_algo == CUDNN_RNN_ALGO_PERSIST_STATIC ? "PERSIST_STATIC"
                                                                           : "PERSIST_DYNAMIC";
    ctx.note("persistent RNN algorithm " + std::string(algo) + " for T=" + std::to_string(T) +
             ", N=" + std::to_string(N));
  } else if (asked_persistent() && weights_) {
    ctx.note("no persistent RNN algorithm for this shape: STANDARD");
  }
  return ok_status();
}

void register_cudnn_rnn_kernels(KernelRegistry& r) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    r.add({.op_type = op,
           .since = 7,
           .create = &CudnnRnnKernel::create,
           .claim = &cudnn_rnn_claim,
           .host_inputs = {kRnnSeqLens},
           .prepacked_inputs = {kRnnW, kRnnR, kRnnB, kRnnP}});
  }
  std::vector<size_t> prepacked;
  for (int l = 0; l < 64; ++l) {
    for (RnnInput w : {kRnnW, kRnnR, kRnnB}) prepacked.push_back(stacked_input(l, w));
  }
  r.add({.op_type = kStackedRnnOp,
         .domain = kStackedRnnDomain,
         .since = 1,
         .create = &CudnnRnnKernel::create,
         .claim = &cudnn_stacked_rnn_claim,
         .host_inputs = {1},
         .prepacked_inputs = prepacked});
}

}  // namespace recur::cuda
