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
#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_context.h"
#include "providers/cuda/rnn/cudnn_rnn_plan.h"
#include "providers/cuda/rnn/cudnn_weight_params.h"
#include "providers/cuda/rnn/rnn_kernels.h"
#include "runtime/rnn/rnn_spec.h"
#include "runtime/rnn/stacked_rnn.h"

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
  return cudnnSetRNNDescriptor_v8(d, algo, mode, g.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
                                  g.directions == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                  CUDNN_LINEAR_INPUT, c.data_type(), CUDNN_DATA_FLOAT, math,
                                  static_cast<int32_t>(g.input_size), H,
                                  /*projSize=*/H, static_cast<int32_t>(g.num_layers),
                                  /*dropoutDesc=*/nullptr, CUDNN_RNN_PADDED_IO_ENABLED);
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
  for (int p = 0; p < g.pseudo_layers(); ++p) {
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

  // Input and output positions: the node's own, or layer l's in a recur::StackedRNN.
  size_t in_pos(int l, RnnInput which) const {
    return stacked_ ? stacked_input(l, which) : static_cast<size_t>(which);
  }
  size_t out_pos(int l, RnnOutput which) const {
    return stacked_ ? stacked_output(l, which) : static_cast<size_t>(which);
  }
  size_t lens_pos() const { return stacked_ ? 1 : static_cast<size_t>(kRnnSeqLens); }

  RnnSpec spec_;
  bool stacked_ = false;
  int layers_ = 1;
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
  k->stacked_ = node.domain == kStackedRnnDomain;
  if (k->stacked_) {
    RECUR_ASSIGN_OR_RETURN(StackedRnnSpec ss, parse_stacked_rnn(node));
    k->spec_ = ss.spec;
    k->layers_ = ss.num_layers;
  } else {
    RECUR_ASSIGN_OR_RETURN(k->spec_, RnnSpec::parse(node));
  }
  const Claim claim =
      k->stacked_ ? cudnn_stacked_rnn_claim(node, ctx.graph()) : cudnn_rnn_claim(node, ctx.graph());
  if (!claim.yes) return ctx.error(ErrorCode::kNotImplemented, claim.reason);

  const TypeInfo& wt = ctx.input_type(k->in_pos(0, kRnnW));
  const TypeInfo& rt = ctx.input_type(k->in_pos(0, kRnnR));
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
  g.num_layers = k->layers_;
  k->has_b_ = false;
  for (int l = 0; l < k->layers_; ++l) k->has_b_ |= ctx.has_input(k->in_pos(l, kRnnB));
  // Persistent algorithms need DOUBLE_BIAS; zero biases cost nothing.
  g.bias = k->has_b_ || k->persistent_;
  const int64_t G = g.gates(), H = g.hidden_size, D = g.directions;
  for (int l = 0; l < k->layers_; ++l) {
    const Shape wl = ctx.input_type(k->in_pos(l, kRnnW)).static_shape();
    const Shape rl = ctx.input_type(k->in_pos(l, kRnnR)).static_shape();
    if (wl != Shape{D, G * H, g.layer_input_size(l)} || rl != Shape{D, G * H, H}) {
      return ctx.error(ErrorCode::kInvalidModel,
                       "W " + shape_to_string(wl) + " and R " + shape_to_string(rl) +
                           " do not match hidden_size " + std::to_string(H) +
                           (k->stacked_ ? " (layer " + std::to_string(l) + ")" : ""));
    }
    if (ctx.has_input(k->in_pos(l, kRnnB))) {
      const TypeInfo& bt = ctx.input_type(k->in_pos(l, kRnnB));
      if (bt.is_static() && bt.static_shape() != Shape{D, 2 * G * H}) {
        return ctx.error(ErrorCode::kInvalidModel, "B must have shape [" + std::to_string(D) + "," +
                                                       std::to_string(2 * G * H) + "], got " +
                                                       shape_to_string(bt.static_shape()));
      }
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

  std::vector<const void*> wl, rl, bl;
  bool all_constant = true;
  for (int l = 0; l < k->layers_; ++l) {
    const Tensor* w = ctx.constant_input(k->in_pos(l, kRnnW));
    const Tensor* r = ctx.constant_input(k->in_pos(l, kRnnR));
    const bool has_b = ctx.has_input(k->in_pos(l, kRnnB));
    const Tensor* b = has_b ? ctx.constant_input(k->in_pos(l, kRnnB)) : nullptr;
    all_constant = all_constant && w && r && (b || !has_b);
    wl.push_back(w ? w->raw_data() : nullptr);
    rl.push_back(r ? r->raw_data() : nullptr);
    bl.push_back(b ? b->raw_data() : nullptr);
  }
  if (all_constant) {
    // Constant weights: repacked once on the host, uploaded, and the originals released.
    std::vector<char> host(k->weight_bytes_);
    RECUR_RETURN_IF_ERROR(apply_onnx_to_cudnn_layers(k->weight_plan_, c.elem_size(), wl, rl, bl,
                                                     host.data(), host.size()));
    RECUR_RETURN_IF_ERROR(copy_host_to_device(space.get(), k->device_, host.data(), host.size()));
    k->weights_ = std::move(space);
    for (int l = 0; l < k->layers_; ++l) {
      ctx.release_input(k->in_pos(l, kRnnW));
      ctx.release_input(k->in_pos(l, kRnnR));
      if (bl[static_cast<size_t>(l)]) ctx.release_input(k->in_pos(l, kRnnB));
    }
    ctx.note("weights repacked into cuDNN's weight space at load (" +
             std::to_string(k->weight_bytes_) + " bytes on " + ctx.provider().device().to_string() +
             ")");
  } else {
    ctx.note("W, R or B is not a constant: repacked into cuDNN's weight space on every run");
  }
  if (k->stacked_) {
    ctx.note("one cudnnRNNForward with numLayers=" + std::to_string(k->layers_));
  }
  if (!k->stacked_ && ctx.has_input(kRnnP)) {
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
  const int64_t T = dims.seq_length, N = dims.batch, D = dims.directions, H = dims.hidden;
  const int64_t L = layers_;
  const Shape y_shape = spec_.layout == 0 ? Shape{T, D, N, H} : Shape{N, T, D, H};
  const Shape s_shape = spec_.layout == 0 ? Shape{D, N, H} : Shape{N, D, H};
  const int64_t layer_state = D * N * H;
  for (int l = 0; l < L; ++l) {
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
  const size_t e = config_.elem_size();
  std::vector<std::shared_ptr<void>> keep;
  auto scratch = [&](int64_t elems) -> Result<void*> {
    RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> q,
                           allocate_device(static_cast<size_t>(elems) * e, device_));
    keep.push_back(q);
    return q.get();
  };

  CudnnRunBuffers buf;
  buf.x = x->raw_data();
  const bool lstm = spec_.cell == RnnCell::kLstm;
  bool want_yh = false, want_yc = false;
  for (int l = 0; l < L; ++l) {
    want_yh |= ctx.output_requested(out_pos(l, kRnnYh));
    want_yc |= lstm && ctx.output_requested(out_pos(l, kRnnYc));
  }
  const bool want_y = ctx.output_requested(kRnnY);
  if (want_y) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnY, config_.dtype, y_shape));
    buf.y = t->raw_data();
  }
  // One layer: the node's own states. Several: every layer's states one after the other
  // ([L*D,N,H], cuDNN's order), gathered from and scattered to the per-layer inputs/outputs.
  std::vector<Tensor*> yh_out(static_cast<size_t>(L), nullptr),
      yc_out(static_cast<size_t>(L), nullptr);
  for (int l = 0; l < L; ++l) {
    if (ctx.output_requested(out_pos(l, kRnnYh))) {
      RECUR_ASSIGN_OR_RETURN(yh_out[static_cast<size_t>(l)],
                             ctx.allocate_output(out_pos(l, kRnnYh), config_.dtype, s_shape));
    }
    if (lstm && ctx.output_requested(out_pos(l, kRnnYc))) {
      RECUR_ASSIGN_OR_RETURN(yc_out[static_cast<size_t>(l)],
                             ctx.allocate_output(out_pos(l, kRnnYc), config_.dtype, s_shape));
    }
  }
  if (!stacked_) {
    buf.h0 = h0 ? h0->raw_data() : nullptr;
    buf.c0 = c0 ? c0->raw_data() : nullptr;
    buf.yh = yh_out[0] ? yh_out[0]->raw_data() : nullptr;
    buf.yc = yc_out[0] ? yc_out[0]->raw_data() : nullptr;
  } else {
    for (RnnInput which : {kRnnInitialH, kRnnInitialC}) {
      bool any = false;
      for (int l = 0; l < L; ++l) any |= ctx.input(in_pos(l, which)) != nullptr;
      if (!any || (which == kRnnInitialC && !lstm)) continue;
      RECUR_ASSIGN_OR_RETURN(void* all, scratch(L * layer_state));
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
    if (want_yh) {
      RECUR_ASSIGN_OR_RETURN(buf.yh, scratch(L * layer_state));
    }
    if (want_yc) {
      RECUR_ASSIGN_OR_RETURN(buf.yc, scratch(L * layer_state));
    }
  }
  // Stacked: each requested layer's Y_h/Y_c out of the [L*D,N,H] buffers.
  auto scatter_states = [&]() -> Status {
    if (!stacked_) return ok_status();
    for (int l = 0; l < L; ++l) {
      for (auto [out, all] : {std::pair<Tensor*, void*>{yh_out[static_cast<size_t>(l)], buf.yh},
                              {yc_out[static_cast<size_t>(l)], buf.yc}}) {
        if (!out || !all) continue;
        RECUR_CUDA_CHECK(cudaMemcpyAsync(
            out->raw_data(), static_cast<char*>(all) + static_cast<size_t>(l * layer_state) * e,
            static_cast<size_t>(layer_state) * e, cudaMemcpyDeviceToDevice, sc.stream()));
      }
    }
    return ok_status();
  };
  if (T == 0 || N == 0) {
    // No step runs: every output is zeros (a length of 0 gives zeros).
    if (buf.y && T * D * N * H != 0) {
      RECUR_CUDA_CHECK(
          cudaMemsetAsync(buf.y, 0, static_cast<size_t>(T * D * N * H) * e, sc.stream()));
    }
    for (auto& v : {yh_out, yc_out}) {
      for (Tensor* t : v) {
        if (t && t->nbytes())
          RECUR_CUDA_CHECK(cudaMemsetAsync(t->raw_data(), 0, t->nbytes(), sc.stream()));
      }
    }
    return ok_status();
  }

  CudnnRunPlan plan =
      plan_cudnn_run(spec_, dims, lens ? lens->data<int32_t>() : nullptr, want_y, want_yh, want_yc);
  plan.L = L;
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<const ShapePlan> sp, shape_plan(handle, T, N));

  const void* weights = weights_.get();
  std::shared_ptr<void> run_weights;
  if (!weights) {
    // Weights that are graph inputs: repacked on the device, into a zeroed weight space.
    for (int l = 0; l < L; ++l) {
      for (RnnInput which : {kRnnW, kRnnR, kRnnB}) {
        const Tensor* t = ctx.input(in_pos(l, which));
        if (t && t->device() != ctx.device()) {
          return ctx.error(ErrorCode::kInternal, "a weight input is on " + t->device().to_string());
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(run_weights, allocate_device(weight_bytes_, device_));
    char* dst = static_cast<char*>(run_weights.get());
    RECUR_CUDA_CHECK(cudaMemsetAsync(dst, 0, weight_bytes_, sc.stream()));
    for (const CudnnWeightCopy& cp : weight_plan_.copies) {
      const RnnInput which = cp.tensor == CudnnWeightCopy::Source::kW   ? kRnnW
                             : cp.tensor == CudnnWeightCopy::Source::kR ? kRnnR
                                                                        : kRnnB;
      const Tensor* src = ctx.input(in_pos(cp.layer, which));
      if (!src) continue;
      RECUR_CUDA_CHECK(cudaMemcpyAsync(
          dst + static_cast<size_t>(cp.cudnn_offset) * e,
          static_cast<const char*>(src->raw_data()) + static_cast<size_t>(cp.onnx_offset) * e,
          static_cast<size_t>(cp.count) * e, cudaMemcpyDeviceToDevice, sc.stream()));
    }
    weights = run_weights.get();
  }
  CudaRnnBackend backend(*this, sc, handle, *sp, weights);
  RECUR_RETURN_IF_ERROR(execute_cudnn_run(plan, buf, backend));
  return scatter_states();
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
