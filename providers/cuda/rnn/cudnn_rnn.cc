// ONNX LSTM, GRU and RNN on cudnnRNNForward (cuDNN 9, v8 API): LINEAR_INPUT, DOUBLE_BIAS or
// NO_BIAS, projSize = hiddenSize, one layer, padded unpacked IO (SEQ_MAJOR_UNPACKED for
// layout=0, BATCH_MAJOR_UNPACKED for layout=1), sequence lengths from host memory.
//
// Compile: descriptors, the weight space (repacked once for constant weights), and, when X
// has a static shape, the per-shape descriptors and workspace size. Run: nothing but the
// calls that depend on the run's sequence lengths.
#include "providers/cuda/rnn/cudnn_rnn.h"

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "converters/cudnn_weights.h"
#include "converters/rnn_spec.h"
#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_context.h"
#include "providers/cuda/rnn/cudnn_rnn_plan.h"
#include "providers/cuda/rnn/cudnn_weight_params.h"
#include "providers/cuda/rnn/rnn_kernels.h"

namespace recur::cuda {

namespace {

// --- Descriptor ownership ----------------------------------------------------------------

struct RnnDescDeleter {
  void operator()(cudnnRNNDescriptor_t d) const { cudnnDestroyRNNDescriptor(d); }
};
struct RnnDataDescDeleter {
  void operator()(cudnnRNNDataDescriptor_t d) const { cudnnDestroyRNNDataDescriptor(d); }
};
struct TensorDescDeleter {
  void operator()(cudnnTensorDescriptor_t d) const { cudnnDestroyTensorDescriptor(d); }
};
using RnnDesc = std::unique_ptr<std::remove_pointer_t<cudnnRNNDescriptor_t>, RnnDescDeleter>;
using RnnDataDesc =
    std::unique_ptr<std::remove_pointer_t<cudnnRNNDataDescriptor_t>, RnnDataDescDeleter>;
using TensorDesc =
    std::unique_ptr<std::remove_pointer_t<cudnnTensorDescriptor_t>, TensorDescDeleter>;

Result<TensorDesc> new_tensor_desc() {
  cudnnTensorDescriptor_t d = nullptr;
  RECUR_CUDA_CHECK(cudnnCreateTensorDescriptor(&d));
  return TensorDesc(d);
}

// Everything cudnnSetRNNDescriptor_v8 takes, but the algorithm.
struct RnnConfig {
  CudnnRnnGeometry geometry;
  bool relu = false;  // RNN cell: CUDNN_RNN_RELU instead of CUDNN_RNN_TANH
  DType dtype = DType::kFloat32;
  bool tf32 = false;

  cudnnDataType_t data_type() const {
    return dtype == DType::kFloat16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  }
  size_t elem_size() const { return dtype == DType::kFloat16 ? 2 : 4; }
};

cudnnStatus_t set_rnn_desc(cudnnRNNDescriptor_t d, const RnnConfig& c, cudnnRNNAlgo_t algo) {
  const CudnnRnnGeometry& g = c.geometry;
  const cudnnRNNMode_t mode = g.cell == RnnCell::kLstm  ? CUDNN_LSTM
                              : g.cell == RnnCell::kGru ? CUDNN_GRU
                              : c.relu                  ? CUDNN_RNN_RELU
                                                        : CUDNN_RNN_TANH;
  // float32: FMA math is exact fp32 (DEFAULT may pick TF32 tensor cores); TF32 on request.
  // float16: tensor cores, accumulating in float32.
  const cudnnMathType_t math = c.dtype == DType::kFloat16 ? CUDNN_TENSOR_OP_MATH
                               : c.tf32                   ? CUDNN_DEFAULT_MATH
                                                          : CUDNN_FMA_MATH;
  const int32_t H = static_cast<int32_t>(g.hidden_size);
  return cudnnSetRNNDescriptor_v8(
      d, algo, mode, g.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
      g.directions == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
      c.data_type(), CUDNN_DATA_FLOAT, math, static_cast<int32_t>(g.input_size), H,
      /*projSize=*/H, /*numLayers=*/1, /*dropoutDesc=*/nullptr, CUDNN_RNN_PADDED_IO_ENABLED);
}

Result<RnnDesc> make_rnn_desc(const RnnConfig& c, cudnnRNNAlgo_t algo) {
  cudnnRNNDescriptor_t d = nullptr;
  RECUR_CUDA_CHECK(cudnnCreateRNNDescriptor(&d));
  RnnDesc owned(d);
  RECUR_CUDA_CHECK(set_rnn_desc(d, c, algo));
  return owned;
}

Result<CudnnParamBlock> block_of(const void* base, const void* addr, cudnnTensorDescriptor_t desc,
                                 size_t elem_size) {
  CudnnParamBlock b;
  if (!addr) return b;
  cudnnDataType_t dt;
  int nb = 0;
  int dims[8] = {0}, strides[8] = {0};
  RECUR_CUDA_CHECK(cudnnGetTensorNdDescriptor(desc, 8, &dt, &nb, dims, strides));
  if (nb < 1) return internal_error("cudnnGetRNNWeightParams gave a descriptor of rank 0");
  int64_t numel = 1;
  for (int i = 0; i < nb; ++i) numel *= dims[i];
  const auto bytes = static_cast<const char*>(addr) - static_cast<const char*>(base);
  if (bytes < 0 || static_cast<size_t>(bytes) % elem_size != 0) {
    return internal_error("cudnnGetRNNWeightParams gave a misaligned address");
  }
  b.offset = static_cast<int64_t>(static_cast<size_t>(bytes) / elem_size);
  b.cols = dims[nb - 1];
  b.rows = b.cols ? numel / b.cols : 0;
  return b;
}

// The weight space's map, as cudnnGetRNNWeightParams reports it for `weight_space`.
Result<CudnnWeightMap> read_weight_map(cudnnHandle_t handle, cudnnRNNDescriptor_t desc,
                                       const RnnConfig& c, void* weight_space,
                                       size_t weight_bytes) {
  const CudnnRnnGeometry& g = c.geometry;
  CudnnWeightMap map(g, static_cast<int64_t>(weight_bytes / c.elem_size()));
  RECUR_ASSIGN_OR_RETURN(TensorDesc mdesc, new_tensor_desc());
  RECUR_ASSIGN_OR_RETURN(TensorDesc bdesc, new_tensor_desc());
  for (int p = 0; p < g.directions; ++p) {
    for (int id = 0; id < g.lin_layers(); ++id) {
      void* m = nullptr;
      void* b = nullptr;
      RECUR_CUDA_CHECK(cudnnGetRNNWeightParams(handle, desc, p, weight_bytes, weight_space, id,
                                               mdesc.get(), &m, bdesc.get(), &b));
      RECUR_ASSIGN_OR_RETURN(CudnnParamBlock mb,
                             block_of(weight_space, m, mdesc.get(), c.elem_size()));
      RECUR_ASSIGN_OR_RETURN(CudnnParamBlock bb,
                             block_of(weight_space, b, bdesc.get(), c.elem_size()));
      map.set(p, id, mb, bb);
    }
  }
  RECUR_RETURN_IF_ERROR(map.validate());
  return map;
}

Status set_data_desc(cudnnRNNDataDescriptor_t d, const RnnConfig& c, int layout, int64_t T,
                     int64_t N, int64_t V, const int32_t* lengths) {
  // Zero bytes read as 0 in every data type: the padding cuDNN writes into y.
  static const double kZero = 0.0;
  static_assert(sizeof(int32_t) == sizeof(int));
  RECUR_CUDA_CHECK(cudnnSetRNNDataDescriptor(
      d, c.data_type(),
      layout == 0 ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED
                  : CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
      static_cast<int>(T), static_cast<int>(N), static_cast<int>(V),
      reinterpret_cast<const int*>(lengths), const_cast<double*>(&kZero)));
  return ok_status();
}

// --- Per-shape preparation ---------------------------------------------------------------

// Descriptors and sizes for one (T, N). Immutable once built, so concurrent runs share it;
// only the persistent algorithm's "works" flag may drop to false.
struct ShapePlan {
  int64_t T = 0, N = 0;
  TensorDesc h_desc;           // [D,N,H], packed
  RnnDataDesc x_full, y_full;  // every length T
  size_t workspace = 0;        // STANDARD with every length T
  RnnDesc persist_desc;        // a persistent algorithm cuDNN accepted for this shape
  size_t persist_workspace = 0;
  mutable std::atomic<bool> persist_ok{false};
};

class CudnnRnnKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(CompileContext& ctx);
  Status run(KernelContext& ctx) const override;

 private:
  Result<std::shared_ptr<const ShapePlan>> shape_plan(cudnnHandle_t handle, int64_t T,
                                                      int64_t N) const;
  Result<std::shared_ptr<const ShapePlan>> build_shape_plan(cudnnHandle_t handle, int64_t T,
                                                            int64_t N) const;
  Status try_persistent(cudnnHandle_t handle, ShapePlan& sp) const;

  // The STANDARD descriptor for runs on `sc`'s stream. cuDNN may keep per-descriptor state
  // while it runs, so concurrent runs (each on its own stream) never share one; created once
  // per stream, then reused.
  Result<cudnnRNNDescriptor_t> desc_for(const StreamContext& sc) const;

  friend class CudaRnnBackend;

  RnnSpec spec_;
  RnnConfig config_;
  int device_ = 0;
  bool persistent_ = false;
  RnnDesc desc_;  // STANDARD
  size_t weight_bytes_ = 0;
  CudnnWeightPlan weight_plan_;
  CudnnWeightMap weight_map_;
  std::shared_ptr<void> weights_;  // device weight space; null when repacked per run
  // Shape-only stand-ins for W, R and B when they were repacked and released, so that the
  // run-time checks of check_rnn_inputs still see their shapes.
  Tensor w_shape_, r_shape_, b_shape_;
  bool has_b_ = false;

  mutable std::mutex desc_mu_;
  mutable std::map<const StreamContext*, RnnDesc> stream_descs_;

  static constexpr size_t kMaxShapes = 32;
  mutable std::mutex mu_;
  mutable std::list<std::shared_ptr<const ShapePlan>> shapes_;  // most recent first
};

Result<cudnnRNNDescriptor_t> CudnnRnnKernel::desc_for(const StreamContext& sc) const {
  std::lock_guard lock(desc_mu_);
  auto it = stream_descs_.find(&sc);
  if (it != stream_descs_.end()) return it->second.get();
  RECUR_ASSIGN_OR_RETURN(RnnDesc d, make_rnn_desc(config_, CUDNN_RNN_ALGO_STANDARD));
  cudnnRNNDescriptor_t raw = d.get();
  stream_descs_.emplace(&sc, std::move(d));
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
  // Built outside the lock: two runs may both build one; the second is simply dropped.
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<const ShapePlan> sp, build_shape_plan(handle, T, N));
  std::lock_guard lock(mu_);
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
  RECUR_ASSIGN_OR_RETURN(sp->h_desc, new_tensor_desc());
  const int dims[3] = {static_cast<int>(D), static_cast<int>(N), static_cast<int>(H)};
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
  if (persistent_ && weights_) RECUR_RETURN_IF_ERROR(try_persistent(handle, *sp));
  return std::shared_ptr<const ShapePlan>(std::move(sp));
}

// cuDNN's persistent algorithms need fixed lengths and DOUBLE_BIAS (see FACTS.md). Each is
// tried in turn; "not supported" anywhere moves on to the next, and STANDARD is the last
// resort. A candidate must lay the weight space out as STANDARD does, so one weight space
// serves both.
Status CudnnRnnKernel::try_persistent(cudnnHandle_t handle, ShapePlan& sp) const {
  std::vector<cudnnRNNAlgo_t> algos;
  const CudnnRnnGeometry& g = config_.geometry;
  if (g.cell != RnnCell::kRnn && g.hidden_size <= 192) {
    algos.push_back(CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H);
  }
  algos.push_back(CUDNN_RNN_ALGO_PERSIST_STATIC);
  algos.push_back(CUDNN_RNN_ALGO_PERSIST_DYNAMIC);
  for (cudnnRNNAlgo_t algo : algos) {
    cudnnRNNDescriptor_t d = nullptr;
    RECUR_CUDA_CHECK(cudnnCreateRNNDescriptor(&d));
    RnnDesc desc(d);
    cudnnStatus_t st = set_rnn_desc(d, config_, algo);
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
    if (is_not_supported(st)) continue;
    RECUR_CUDA_CHECK(st);
    if (bytes != weight_bytes_) continue;
    auto map = read_weight_map(handle, d, config_, weights_.get(), bytes);
    if (!map.ok() || !(*map == weight_map_)) continue;
    sp.persist_desc = std::move(desc);
    sp.persist_workspace = work;
    sp.persist_ok = true;
    return ok_status();
  }
  return ok_status();
}

// --- Compile -------------------------------------------------------------------------------

Result<bool> setting(const CompileContext& ctx, const std::string& key) {
  const auto& s = ctx.provider().config().settings;
  auto it = s.find(key);
  if (it == s.end()) return false;
  return it->second == "1" || it->second == "true" || it->second == "on";
}

Result<std::unique_ptr<Kernel>> CudnnRnnKernel::create(CompileContext& ctx) {
  auto k = std::make_unique<CudnnRnnKernel>();
  const Node& node = ctx.node();
  RECUR_ASSIGN_OR_RETURN(k->spec_, RnnSpec::parse(node));
  const Claim claim = cudnn_rnn_claim(node, ctx.graph());
  if (!claim.yes) return ctx.error(ErrorCode::kNotImplemented, claim.reason);

  const TypeInfo& wt = ctx.input_type(kRnnW);
  const TypeInfo& rt = ctx.input_type(kRnnR);
  const Shape ws = wt.static_shape(), rs = rt.static_shape();
  RnnConfig& c = k->config_;
  c.dtype = ctx.input_type(kRnnX).dtype;
  RECUR_ASSIGN_OR_RETURN(c.tf32, setting(ctx, "tf32"));
  RECUR_ASSIGN_OR_RETURN(k->persistent_, setting(ctx, "persistent"));
  c.relu = k->spec_.cell == RnnCell::kRnn &&
           k->spec_.activations.front().kind == RnnActivation::Kind::kRelu;
  CudnnRnnGeometry& g = c.geometry;
  g.cell = k->spec_.cell;
  g.directions = k->spec_.num_directions();
  g.input_size = ws[2];
  g.hidden_size = k->spec_.hidden_size > 0 ? k->spec_.hidden_size : rs[2];
  k->has_b_ = ctx.has_input(kRnnB);
  // Persistent algorithms need DOUBLE_BIAS; zero biases cost nothing.
  g.bias = k->has_b_ || k->persistent_;
  const int64_t G = g.gates(), H = g.hidden_size, D = g.directions;
  if (ws != Shape{D, G * H, g.input_size} || rs != Shape{D, G * H, H}) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "W " + shape_to_string(ws) + " and R " + shape_to_string(rs) +
                         " do not match hidden_size " + std::to_string(H));
  }
  if (k->has_b_) {
    const TypeInfo& bt = ctx.input_type(kRnnB);
    if (bt.is_static() && bt.static_shape() != Shape{D, 2 * G * H}) {
      return ctx.error(ErrorCode::kInvalidModel, "B must have shape [" + std::to_string(D) + "," +
                                                     std::to_string(2 * G * H) + "], got " +
                                                     shape_to_string(bt.static_shape()));
    }
  }
  k->w_shape_ = Tensor::borrow(nullptr, c.dtype, ws);
  k->r_shape_ = Tensor::borrow(nullptr, c.dtype, rs);
  k->b_shape_ = Tensor::borrow(nullptr, c.dtype, {D, 2 * G * H});
  k->device_ = ctx.provider().device().index;

  ScopedStream scoped(k->device_);
  RECUR_RETURN_IF_ERROR(scoped.status());
  RECUR_ASSIGN_OR_RETURN(cudnnHandle_t handle, scoped.context().cudnn());
  RECUR_ASSIGN_OR_RETURN(k->desc_, make_rnn_desc(c, CUDNN_RNN_ALGO_STANDARD));
  RECUR_CUDA_CHECK(cudnnGetRNNWeightSpaceSize(handle, k->desc_.get(), &k->weight_bytes_));
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> space,
                         allocate_device(k->weight_bytes_, k->device_));
  RECUR_ASSIGN_OR_RETURN(k->weight_map_,
                         read_weight_map(handle, k->desc_.get(), c, space.get(), k->weight_bytes_));
  RECUR_ASSIGN_OR_RETURN(k->weight_plan_, plan_onnx_to_cudnn(k->weight_map_));

  const Tensor* w = ctx.constant_input(kRnnW);
  const Tensor* r = ctx.constant_input(kRnnR);
  const Tensor* b = k->has_b_ ? ctx.constant_input(kRnnB) : nullptr;
  if (w && r && (b || !k->has_b_)) {
    // Constant weights: repacked once on the host, uploaded, and the originals released.
    std::vector<char> host(k->weight_bytes_);
    RECUR_RETURN_IF_ERROR(apply_onnx_to_cudnn(k->weight_plan_, c.elem_size(), w->raw_data(),
                                              r->raw_data(), b ? b->raw_data() : nullptr,
                                              host.data(), host.size()));
    RECUR_RETURN_IF_ERROR(copy_host_to_device(space.get(), k->device_, host.data(), host.size()));
    k->weights_ = std::move(space);
    ctx.release_input(kRnnW);
    ctx.release_input(kRnnR);
    if (b) ctx.release_input(kRnnB);
    ctx.note("weights repacked into cuDNN's weight space at load (" +
             std::to_string(k->weight_bytes_) + " bytes on " + ctx.provider().device().to_string() +
             ")");
  } else {
    ctx.note("W, R or B is not a constant: repacked into cuDNN's weight space on every run");
  }
  if (ctx.has_input(kRnnP)) {
    ctx.release_input(kRnnP);  // a constant of zeros (the claim checked): nothing to compute
    ctx.note("P is all zeros: peepholes dropped");
  }
  if (k->persistent_ && !k->weights_) {
    ctx.note("cudnn.persistent is on, but persistent algorithms need constant weights: STANDARD");
  }

  // A static X shape: everything per-shape is prepared now.
  const TypeInfo& xt = ctx.input_type(kRnnX);
  if (xt.is_static() && xt.rank() == 3) {
    const Shape xs = xt.static_shape();
    const int64_t T = k->spec_.layout == 0 ? xs[0] : xs[1];
    const int64_t N = k->spec_.layout == 0 ? xs[1] : xs[0];
    if (T > 0 && N > 0) {
      RECUR_ASSIGN_OR_RETURN(auto sp, k->shape_plan(handle, T, N));
      if (k->persistent_ && k->weights_) {
        ctx.note(sp->persist_ok ? "persistent RNN algorithm for T=" + std::to_string(T) +
                                      ", N=" + std::to_string(N)
                                : "no persistent RNN algorithm for this shape: STANDARD");
      }
    }
  }
  RECUR_RETURN_IF_ERROR(scoped.synchronize());
  return std::unique_ptr<Kernel>(std::move(k));
}

// --- Run -----------------------------------------------------------------------------------

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
    RECUR_ASSIGN_OR_RETURN(cudnnRNNDescriptor_t desc, k_.desc_for(sc_));
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
      RECUR_ASSIGN_OR_RETURN(void* work, workspace(sp_.persist_workspace));
      const cudnnStatus_t st = call(sp_.persist_desc.get(), xd, yd, a, work, sp_.persist_workspace);
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

  const Tensor* x = ctx.input(kRnnX);
  const Tensor* w = ctx.input(kRnnW);
  const Tensor* r = ctx.input(kRnnR);
  const Tensor* b = ctx.input(kRnnB);
  const Tensor* lens = ctx.input(kRnnSeqLens);
  const Tensor* h0 = ctx.input(kRnnInitialH);
  const Tensor* c0 = ctx.input(kRnnInitialC);
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
  for (const Tensor* t : {x, h0, c0}) {
    if (t && t->device() != ctx.device()) {
      return ctx.error(ErrorCode::kInternal, "an input is on " + t->device().to_string() +
                                                 ", expected " + ctx.device().to_string());
    }
  }

  const int64_t T = dims.seq_length, N = dims.batch, D = dims.directions, H = dims.hidden;
  const Shape y_shape = spec_.layout == 0 ? Shape{T, D, N, H} : Shape{N, T, D, H};
  const Shape s_shape = spec_.layout == 0 ? Shape{D, N, H} : Shape{N, D, H};
  CudnnRunBuffers buf;
  buf.x = x->raw_data();
  buf.h0 = h0 ? h0->raw_data() : nullptr;
  buf.c0 = c0 ? c0->raw_data() : nullptr;
  const bool want_y = ctx.output_requested(kRnnY);
  const bool want_yh = ctx.output_requested(kRnnYh);
  const bool want_yc = spec_.cell == RnnCell::kLstm && ctx.output_requested(kRnnYc);
  if (want_y) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnY, config_.dtype, y_shape));
    buf.y = t->raw_data();
  }
  if (want_yh) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYh, config_.dtype, s_shape));
    buf.yh = t->raw_data();
  }
  if (want_yc) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYc, config_.dtype, s_shape));
    buf.yc = t->raw_data();
  }
  const size_t e = config_.elem_size();
  if (T == 0 || N == 0) {
    // No step runs: every output is zeros (a length of 0 gives zeros).
    for (void* p : {buf.y, buf.yh, buf.yc}) {
      const size_t bytes = static_cast<size_t>((p == buf.y ? T * D * N * H : D * N * H)) * e;
      if (p && bytes) RECUR_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, sc.stream()));
    }
    return ok_status();
  }

  const CudnnRunPlan plan =
      plan_cudnn_run(spec_, dims, lens ? lens->data<int32_t>() : nullptr, want_y, want_yh, want_yc);
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<const ShapePlan> sp, shape_plan(handle, T, N));

  const void* weights = weights_.get();
  std::shared_ptr<void> run_weights;
  if (!weights) {
    // Weights that are graph inputs: repacked on the device, into a zeroed weight space.
    for (const Tensor* t : {w, r, b}) {
      if (t && t->device() != ctx.device()) {
        return ctx.error(ErrorCode::kInternal, "a weight input is on " + t->device().to_string());
      }
    }
    RECUR_ASSIGN_OR_RETURN(run_weights, allocate_device(weight_bytes_, device_));
    char* dst = static_cast<char*>(run_weights.get());
    RECUR_CUDA_CHECK(cudaMemsetAsync(dst, 0, weight_bytes_, sc.stream()));
    for (const CudnnWeightCopy& cp : weight_plan_.copies) {
      const Tensor* src = cp.tensor == CudnnWeightCopy::Source::kW   ? w
                          : cp.tensor == CudnnWeightCopy::Source::kR ? r
                                                                     : b;
      if (!src) continue;
      RECUR_CUDA_CHECK(cudaMemcpyAsync(
          dst + static_cast<size_t>(cp.cudnn_offset) * e,
          static_cast<const char*>(src->raw_data()) + static_cast<size_t>(cp.onnx_offset) * e,
          static_cast<size_t>(cp.count) * e, cudaMemcpyDeviceToDevice, sc.stream()));
    }
    weights = run_weights.get();
  }
  CudaRnnBackend backend(*this, sc, handle, *sp, weights);
  return execute_cudnn_run(plan, buf, backend);
}

}  // namespace

Result<CudnnWeightMap> query_cudnn_weight_map(const CudnnRnnGeometry& geometry, DType dtype,
                                              int device) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat16) {
    return invalid_argument("query_cudnn_weight_map: float32 or float16 only");
  }
  RnnConfig c;
  c.geometry = geometry;
  c.dtype = dtype;
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  RECUR_ASSIGN_OR_RETURN(cudnnHandle_t handle, scoped.context().cudnn());
  RECUR_ASSIGN_OR_RETURN(RnnDesc desc, make_rnn_desc(c, CUDNN_RNN_ALGO_STANDARD));
  size_t bytes = 0;
  RECUR_CUDA_CHECK(cudnnGetRNNWeightSpaceSize(handle, desc.get(), &bytes));
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> space, allocate_device(bytes, device));
  RECUR_ASSIGN_OR_RETURN(CudnnWeightMap map,
                         read_weight_map(handle, desc.get(), c, space.get(), bytes));
  RECUR_RETURN_IF_ERROR(scoped.synchronize());
  return map;
}

void register_cudnn_rnn_kernels(KernelRegistry& r) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    r.add({.op_type = op,
           .since = 7,
           .create = &CudnnRnnKernel::create,
           .claim = &cudnn_rnn_claim,
           .infer = &infer_rnn,
           .host_inputs = {kRnnSeqLens},
           .prepacked_inputs = {kRnnW, kRnnR, kRnnB, kRnnP}});
  }
}

}  // namespace recur::cuda
