// cuda-generic's LSTM, GRU and RNN: every ONNX attribute on the GPU (generic_rnn_plan.h). One
// cuBLAS GEMM projects X for every step and direction; each step runs one batched GEMM over
// the directions for the recurrent part and one fused gate kernel (two of each for a GRU with
// linear_before_reset=0). Constant weights are converted to the compute type and uploaded at
// load; sequence lengths are read on the device, so nothing goes back to the host.
#include "providers/cuda/rnn/generic_rnn.h"

#include <cuda_fp16.h>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_context.h"
#include "providers/cuda/cuda_options.h"
#include "providers/cuda/rnn/generic_rnn_kernels.h"
#include "providers/cuda/rnn/generic_rnn_plan.h"
#include "providers/cuda/rnn/generic_rnn_prep.h"
#include "runtime/rnn/rnn_spec.h"

namespace recur::cuda {

namespace {

bool supported_dtype(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16;
}

// C's device copy of a constant, converted at load.
template <class C>
Result<std::shared_ptr<void>> upload(const std::vector<C>& v, int device) {
  RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> p, allocate_device(v.size() * sizeof(C), device));
  RECUR_RETURN_IF_ERROR(copy_host_to_device(p.get(), device, v.data(), v.size() * sizeof(C)));
  return p;
}

template <class C>
cublasStatus_t gemm_strided(const Blas& blas, int m, int n, int k, const C* a, int lda,
                            long long sa, const C* b, int ldb, long long sb, C* c, int ldc,
                            long long sc, int batch) {
  const C one(1), zero(0);
  if constexpr (std::is_same_v<C, float>) {
    return blas.api->sgemm_strided_batched(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a,
                                           lda, sa, b, ldb, sb, &zero, c, ldc, sc, batch);
  } else {
    return blas.api->dgemm_strided_batched(blas.handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a,
                                           lda, sa, b, ldb, sb, &zero, c, ldc, sc, batch);
  }
}

template <class T, class C>
class CudaRnnBackend final : public GenericRnnBackend<T, C> {
 public:
  CudaRnnBackend(Blas blas, cudaStream_t stream) : blas_(blas), stream_(stream) {}

  Status gemm_nt(int64_t M, int64_t Nc, int64_t K, const C* A, int64_t lda, int64_t sa, const C* B,
                 int64_t ldb, int64_t sb, C* Cm, int64_t ldc, int64_t sc, int64_t batch) override {
    // Row-major Cm = A B^T is column-major Cm^T = B A^T: B transposed, A as is.
    for (int64_t v : {M, Nc, K, lda, ldb, ldc, batch}) {
      if (v > INT32_MAX) return invalid_argument("an RNN GEMM dimension exceeds cuBLAS's int32");
    }
    if (M == 0 || Nc == 0) return ok_status();
    if (K == 0) {  // an empty sum: zeros (cuBLAS is not asked to handle k = 0)
      for (int64_t q = 0; q < batch; ++q) {
        RECUR_CUDA_CHECK(cudaMemset2DAsync(Cm + q * sc, static_cast<size_t>(ldc) * sizeof(C), 0,
                                           static_cast<size_t>(Nc) * sizeof(C),
                                           static_cast<size_t>(M), stream_));
      }
      return ok_status();
    }
    RECUR_CUDA_CHECK(gemm_strided<C>(blas_, static_cast<int>(Nc), static_cast<int>(M),
                                     static_cast<int>(K), B, static_cast<int>(ldb), sb, A,
                                     static_cast<int>(lda), sa, Cm, static_cast<int>(ldc), sc,
                                     static_cast<int>(batch)));
    return ok_status();
  }
  Status init(const cell::CellParams& p, const T* h0, const T* c0, C* h, C* c) override {
    RECUR_CUDA_CHECK((launch_rnn_init<T, C>(p, h0, c0, h, c, stream_)));
    return ok_status();
  }
  Status step(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, int64_t s,
              int phase) override {
    RECUR_CUDA_CHECK((launch_rnn_step<T, C>(p, b, s, phase, stream_)));
    return ok_status();
  }
  Status finish(const cell::CellParams& p, const int32_t* lens, const C* h, const C* c, T* yh,
                T* yc) override {
    RECUR_CUDA_CHECK((launch_rnn_final<T, C>(p, lens, h, c, yh, yc, stream_)));
    return ok_status();
  }
  Status grid(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r, C* h2,
              const GridShape& g) override {
    RECUR_CUDA_CHECK((launch_rnn_grid<T, C>(p, b, r, h2, g, stream_, false)));
    return ok_status();
  }

 private:
  Blas blas_;
  cudaStream_t stream_;
};

// The grid kernel's shape on the current device, or !ok() where it cannot run this recurrence
// (too wide for its registers, no cooperative launch, too few multiprocessors).
template <class T, class C>
Result<GridShape> grid_for(const cell::CellParams& p) {
  int device = 0, sms = 0, smem = 0, coop = 0;
  RECUR_CUDA_CHECK(cudaGetDevice(&device));
  RECUR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  RECUR_CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  RECUR_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  if (!coop) return GridShape{};
  GridShape g = grid_shape(p, sms, smem, sizeof(C), nullptr);
  if (!g.ok()) return g;
  const cudaError_t e = launch_rnn_grid<T, C>(p, {}, nullptr, nullptr, g, nullptr, true);
  if (e == cudaErrorCooperativeLaunchTooLarge) return GridShape{};
  RECUR_CUDA_CHECK(e);
  return g;
}

// The run's scratch: the input projection and the states, then what the order of operations
// needs: the second state buffer of the grid kernel where `try_grid` and the shape fits it, else
// the per-step GEMMs' rg.
template <class T, class C, class Scratch>
Status allocate_scratch(GenericRnnRun<T, C>& r, bool try_grid, const Scratch& scratch) {
  auto get = [&](int64_t elems, C** dst) -> Status {
    RECUR_ASSIGN_OR_RETURN(void* q, scratch(elems, sizeof(C)));
    *dst = static_cast<C*>(q);
    return ok_status();
  };
  const cell::CellParams& p = r.p;
  RECUR_RETURN_IF_ERROR(get(r.xw_elems(), &r.xw));
  RECUR_RETURN_IF_ERROR(get(r.state_elems(), &r.h));
  if (p.cell == cell::kLstm) RECUR_RETURN_IF_ERROR(get(r.state_elems(), &r.c));
  if (p.cell == cell::kGru && !p.linear_before_reset) {
    RECUR_RETURN_IF_ERROR(get(r.state_elems(), &r.aux));
  }
  if (try_grid) {
    auto shape = grid_for<T, C>(p);  // a macro argument cannot hold the template's comma
    RECUR_RETURN_IF_ERROR(shape.status());
    r.grid = *shape;
  }
  return r.grid.ok() ? get(r.state_elems(), &r.h2) : get(r.rg_elems(), &r.rg);
}

class GenericRnnKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(CompileContext& ctx);
  Status run(KernelContext& ctx) const override;

 private:
  template <class T, class C>
  Status run_typed(KernelContext& ctx, StreamContext& sc, const RnnDims& dims) const;

  RnnSpec spec_;
  cell::CellParams params_;
  DType dtype_ = DType::kFloat32;
  int device_ = 0;
  // cuda-generic.persistent: "off", "on", or "auto" (the grid kernel up to kGridAutoBatch rows
  // per direction, where two launches per step cost more than the recurrent GEMM).
  std::string persistent_ = "off";
  // Constants in the compute type on the device; null when the input is read per run.
  std::shared_ptr<void> w_, r_, bias_, rbh_, peep_;
  // Shape-only stand-ins for the released constants (run-time shape checks).
  Tensor w_shape_, r_shape_, b_shape_, p_shape_;
};

Result<std::unique_ptr<Kernel>> GenericRnnKernel::create(CompileContext& ctx) {
  auto k = std::make_unique<GenericRnnKernel>();
  RECUR_ASSIGN_OR_RETURN(k->spec_, RnnSpec::parse(ctx.node()));
  k->dtype_ = ctx.input_type(kRnnX).dtype;
  if (!supported_dtype(k->dtype_)) {
    return ctx.error(ErrorCode::kNotImplemented, "X must be float16, float32 or float64");
  }
  k->params_ = generic_cell_params(k->spec_);
  k->device_ = ctx.provider().device().index;
  switch (ctx.provider_options<CudaOptions>().persistent) {
    case CudaOptions::Persistent::kOn:
      k->persistent_ = "on";
      break;
    case CudaOptions::Persistent::kAuto:
      k->persistent_ = "auto";
      break;
    default:  // off; the one-algorithm values are cudnn's, refused for cuda-generic
      break;
  }
  const bool wide = k->dtype_ == DType::kFloat64;

  const Tensor* w = ctx.constant_input(kRnnW);
  const Tensor* r = ctx.constant_input(kRnnR);
  const Tensor* b = ctx.has_input(kRnnB) ? ctx.constant_input(kRnnB) : nullptr;
  const Tensor* p = ctx.has_input(kRnnP) ? ctx.constant_input(kRnnP) : nullptr;
  // Shapes are checked (check_rnn_inputs) before any constant is converted.
  if (w && r && w->rank() == 3 && r->rank() == 3 && w->dtype() == k->dtype_ &&
      r->dtype() == k->dtype_) {
    const int64_t H = k->spec_.hidden_size > 0 ? k->spec_.hidden_size : r->dim(2);
    Tensor x_probe = Tensor::borrow(nullptr, k->dtype_, {1, 1, w->dim(2)});
    auto dims =
        check_rnn_inputs(ctx.node(), k->spec_, &x_probe, w, r, b, nullptr, nullptr, nullptr, p);
    if (dims.ok() && (!b || b->dtype() == k->dtype_) && (!p || p->dtype() == k->dtype_)) {
      k->params_.H = H;
      std::string what = "W,R";
      auto put = [&](const Tensor& t, std::shared_ptr<void>* dst) -> Status {
        if (wide) {
          RECUR_ASSIGN_OR_RETURN(*dst, upload(values_as<double>(t), k->device_));
        } else {
          RECUR_ASSIGN_OR_RETURN(*dst, upload(values_as<float>(t), k->device_));
        }
        return ok_status();
      };
      RECUR_RETURN_IF_ERROR(put(*w, &k->w_));
      RECUR_RETURN_IF_ERROR(put(*r, &k->r_));
      k->w_shape_ = Tensor::borrow(nullptr, w->dtype(), w->shape());
      k->r_shape_ = Tensor::borrow(nullptr, r->dtype(), r->shape());
      ctx.release_input(kRnnW);
      ctx.release_input(kRnnR);
      if (b) {
        if (wide) {
          std::vector<double> bias, rbh;
          pack_bias_host(k->params_, *b, &bias, &rbh);
          RECUR_ASSIGN_OR_RETURN(k->bias_, upload(bias, k->device_));
          if (!rbh.empty()) {
            RECUR_ASSIGN_OR_RETURN(k->rbh_, upload(rbh, k->device_));
          }
        } else {
          std::vector<float> bias, rbh;
          pack_bias_host(k->params_, *b, &bias, &rbh);
          RECUR_ASSIGN_OR_RETURN(k->bias_, upload(bias, k->device_));
          if (!rbh.empty()) {
            RECUR_ASSIGN_OR_RETURN(k->rbh_, upload(rbh, k->device_));
          }
        }
        k->b_shape_ = Tensor::borrow(nullptr, b->dtype(), b->shape());
        ctx.release_input(kRnnB);
        what += ",B";
      }
      if (p) {
        RECUR_RETURN_IF_ERROR(put(*p, &k->peep_));
        k->p_shape_ = Tensor::borrow(nullptr, p->dtype(), p->shape());
        ctx.release_input(kRnnP);
        what += ",P";
      }
      ctx.note("constant " + what + " converted to " + (wide ? "float64" : "float32") +
               " and uploaded at load");
    }
  }
  if (!k->w_) ctx.note("W or R is not a constant: read from the device on every run");
  std::string attrs;
  if (k->spec_.clip) attrs += " clip";
  if (ctx.has_input(kRnnP)) attrs += " peepholes";
  if (k->spec_.input_forget) attrs += " input_forget";
  if (!k->spec_.default_activations() || k->spec_.alpha_beta_given) attrs += " activations";
  if (k->spec_.cell == RnnCell::kGru) {
    attrs += k->spec_.linear_before_reset ? " linear_before_reset=1" : " linear_before_reset=0";
  }
  const std::string how = k->persistent_ == "off" ? "a GEMM and a fused gate kernel per step"
                          : k->persistent_ == "on"
                              ? "every step in one launch (the grid kernel) where the shape fits"
                              : "every step in one launch (the grid kernel) up to batch " +
                                    std::to_string(kGridAutoBatch) + " where the shape fits";
  ctx.note(how + (attrs.empty() ? std::string() : " (" + attrs.substr(1) + ")"));
  return std::unique_ptr<Kernel>(std::move(k));
}

Status GenericRnnKernel::run(KernelContext& ctx) const {
  auto* state = dynamic_cast<CudaRunState*>(ctx.env().provider_state);
  if (!state)
    return ctx.error(ErrorCode::kInternal, "no CUDA run state (begin_run was not called)");
  RECUR_RETURN_IF_ERROR(state->status());
  DeviceGuard guard(device_);
  RECUR_RETURN_IF_ERROR(guard.status());
  auto in = [&](size_t i, const Tensor& stand_in) -> const Tensor* {
    return stand_in.defined() ? &stand_in : ctx.input(i);
  };
  const Tensor* x = ctx.input(kRnnX);
  RECUR_ASSIGN_OR_RETURN(
      RnnDims dims,
      check_rnn_inputs(ctx.node(), spec_, x, in(kRnnW, w_shape_), in(kRnnR, r_shape_),
                       in(kRnnB, b_shape_), ctx.input(kRnnSeqLens), ctx.input(kRnnInitialH),
                       ctx.input(kRnnInitialC), in(kRnnP, p_shape_)));
  if (x->dtype() != dtype_) {
    return ctx.error(ErrorCode::kInvalidArgument, "X is " + std::string(dtype_name(x->dtype())) +
                                                      " but the model declared " +
                                                      std::string(dtype_name(dtype_)));
  }
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t && t->device() != ctx.device()) {
      return ctx.error(ErrorCode::kInternal, "input " + std::to_string(i) + " is on " +
                                                 t->device().to_string() + ", expected " +
                                                 ctx.device().to_string());
    }
  }
  StreamContext& sc = state->context();
  switch (dtype_) {
    case DType::kFloat64:
      return run_typed<double, double>(ctx, sc, dims);
    case DType::kFloat16:
      return run_typed<__half, float>(ctx, sc, dims);
    default:
      return run_typed<float, float>(ctx, sc, dims);
  }
}

template <class T, class C>
Status GenericRnnKernel::run_typed(KernelContext& ctx, StreamContext& sc,
                                   const RnnDims& dims) const {
  const cudaStream_t stream = sc.stream();
  const int64_t T_ = dims.seq_length, N = dims.batch, D = dims.directions, H = dims.hidden,
                I = dims.input_size;
  cell::CellParams p = params_;
  p.T = T_;
  p.N = N;
  p.H = H;
  p.D = D;
  const int64_t G = p.gates(), GH = G * H;
  const Shape y_shape = p.layout == 0 ? Shape{T_, D, N, H} : Shape{N, T_, D, H};
  const Shape s_shape = p.layout == 0 ? Shape{D, N, H} : Shape{N, D, H};
  GenericRnnRun<T, C> r;
  r.p = p;
  r.I = I;
  if (const Tensor* l = ctx.input(kRnnSeqLens)) {
    r.lens = l->data<int32_t>();
    // Lengths are read on the device: a bad one is clamped by the cells and reported here,
    // before the outputs, so that a node whose outputs nobody reads reports it too.
    RECUR_ASSIGN_OR_RETURN(int32_t * flag, sc.error_flag());
    const int32_t site =
        sc.error_site(ctx.node().describe() + ": a sequence_lens value is outside [0, " +
                      std::to_string(T_) + "] (the sequence length T)");
    RECUR_CUDA_CHECK(launch_rnn_check_lengths(r.lens, N, T_, flag, site, stream));
  }
  if (ctx.output_requested(kRnnY)) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnY, dtype_, y_shape));
    r.y = static_cast<T*>(t->raw_data());
  }
  if (ctx.output_requested(kRnnYh)) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYh, dtype_, s_shape));
    r.yh = static_cast<T*>(t->raw_data());
  }
  if (p.cell == cell::kLstm && ctx.output_requested(kRnnYc)) {
    RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(kRnnYc, dtype_, s_shape));
    r.yc = static_cast<T*>(t->raw_data());
  }
  if (!r.y && !r.yh && !r.yc) return ok_status();

  std::vector<std::shared_ptr<void>> keep;  // scratch, freed in stream order after the run
  auto scratch = [&](int64_t elems, size_t esize) -> Result<void*> {
    if (elems <= 0) return static_cast<void*>(nullptr);
    if (elems > INT64_MAX / 16) return invalid_argument("RNN workspace size overflows");
    RECUR_ASSIGN_OR_RETURN(std::shared_ptr<void> q,
                           allocate_device(static_cast<size_t>(elems) * esize, device_));
    keep.push_back(q);
    return q.get();
  };
  const Tensor* x = ctx.input(kRnnX);
  if constexpr (std::is_same_v<T, C>) {
    r.x = static_cast<const C*>(x->raw_data());
  } else {
    RECUR_ASSIGN_OR_RETURN(void* xc, scratch(x->numel(), sizeof(C)));
    RECUR_CUDA_CHECK((launch_convert<T, C>(static_cast<const T*>(x->raw_data()),
                                           static_cast<C*>(xc), x->numel(), stream)));
    r.x = static_cast<const C*>(xc);
  }
  // Weights: the load-time copies, or this run's inputs (converted when T is not C).
  auto weight = [&](size_t i, const std::shared_ptr<void>& pre, const C** dst) -> Status {
    if (pre) {
      *dst = static_cast<const C*>(pre.get());
      return ok_status();
    }
    const Tensor* t = ctx.input(i);
    if (!t) return ok_status();
    if constexpr (std::is_same_v<T, C>) {
      *dst = static_cast<const C*>(t->raw_data());
    } else {
      RECUR_ASSIGN_OR_RETURN(void* q, scratch(t->numel(), sizeof(C)));
      RECUR_CUDA_CHECK((launch_convert<T, C>(static_cast<const T*>(t->raw_data()),
                                             static_cast<C*>(q), t->numel(), stream)));
      *dst = static_cast<const C*>(q);
    }
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(weight(kRnnW, w_, &r.w));
  RECUR_RETURN_IF_ERROR(weight(kRnnR, r_, &r.r));
  RECUR_RETURN_IF_ERROR(weight(kRnnP, peep_, &r.peep));
  if (bias_) {
    r.bias = static_cast<const C*>(bias_.get());
    r.rbh = rbh_ ? static_cast<const C*>(rbh_.get()) : nullptr;
  } else if (const Tensor* b = ctx.input(kRnnB)) {
    RECUR_ASSIGN_OR_RETURN(void* bias, scratch(D * GH, sizeof(C)));
    void* rbh = nullptr;
    if (p.cell == cell::kGru && p.linear_before_reset) {
      RECUR_ASSIGN_OR_RETURN(rbh, scratch(D * H, sizeof(C)));
    }
    RECUR_CUDA_CHECK(
        (launch_rnn_pack_bias<T, C>(p, static_cast<const T*>(b->raw_data()), static_cast<C*>(bias),
                                    static_cast<C*>(rbh), stream)));
    r.bias = static_cast<const C*>(bias);
    r.rbh = static_cast<const C*>(rbh);
  }
  if (const Tensor* h0 = ctx.input(kRnnInitialH)) r.h0 = static_cast<const T*>(h0->raw_data());
  if (const Tensor* c0 = ctx.input(kRnnInitialC)) r.c0 = static_cast<const T*>(c0->raw_data());

  RECUR_RETURN_IF_ERROR((allocate_scratch<T, C>(
      r, persistent_ == "on" || (persistent_ == "auto" && N <= kGridAutoBatch), scratch)));
  RECUR_ASSIGN_OR_RETURN(const Blas blas, sc.cublas());
  CudaRnnBackend<T, C> backend(blas, stream);
  return run_generic_rnn<T, C>(r, backend);
}

}  // namespace

Claim generic_rnn_claim(const Node& node, const Graph& graph) {
  Result<RnnSpec> parsed = RnnSpec::parse(node);
  if (!parsed.ok()) return Claim::decline(parsed.status().message());
  const DType dt =
      node.has_input(kRnnX) ? graph.value(node.inputs[kRnnX]).type.dtype : DType::kUndefined;
  if (!supported_dtype(dt)) {
    return Claim::decline(
        "X is " + std::string(dt == DType::kUndefined ? "of unknown type" : dtype_name(dt)) +
        ": cuda-generic's RNN runs float16, float32 and float64");
  }
  return Claim::accept();
}

void register_generic_rnn_kernels(KernelRegistry& r) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    r.add({.op_type = op,
           .since = 1,
           .create = &GenericRnnKernel::create,
           .claim = &generic_rnn_claim,
           .prepacked_inputs = {kRnnW, kRnnR, kRnnB, kRnnP}});
  }
}

}  // namespace recur::cuda
