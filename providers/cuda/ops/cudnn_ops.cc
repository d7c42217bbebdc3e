// cuda-generic's Conv, MaxPool and AveragePool on cuDNN (1-D as 2-D with a width of 1). Exact
// float32 math (CUDNN_FMA_MATH); float16 on tensor cores.
#include <map>
#include <mutex>
#include <type_traits>

#include "providers/cuda/ops/gpu_kernel.h"

namespace recur::cuda::ops {

namespace {

cudnnDataType_t cudnn_type(DType t) {
  return t == DType::kFloat16   ? CUDNN_DATA_HALF
         : t == DType::kFloat64 ? CUDNN_DATA_DOUBLE
                                : CUDNN_DATA_FLOAT;
}

template <class H, cudnnStatus_t (*Destroy)(H)>
struct Owned {
  H h = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (h) Destroy(h);
  }
};
using TensorD = Owned<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterD = Owned<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvD = Owned<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;
using PoolD = Owned<cudnnPoolingDescriptor_t, cudnnDestroyPoolingDescriptor>;

// cuDNN wants at least 4-D: a 1-D [N,C,L] becomes [N,C,L,1].
std::vector<int> dims4(const Shape& s) {
  std::vector<int> d(s.begin(), s.end());
  while (d.size() < 4) d.push_back(1);
  return d;
}

Status set_tensor(cudnnTensorDescriptor_t d, DType t, const std::vector<int>& dims) {
  std::vector<int> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
  RECUR_CUDA_CHECK(cudnnSetTensorNdDescriptor(d, cudnn_type(t), static_cast<int>(dims.size()),
                                              dims.data(), strides.data()));
  return ok_status();
}

bool fits_int(const Shape& s) {
  for (int64_t d : s)
    if (d > INT32_MAX) return false;
  return shape_numel(s) <= INT32_MAX;
}

struct SpatialAttrs {
  std::vector<int64_t> kernel, pads, strides, dilations;
};

// Reads kernel_shape/pads/strides/dilations; pads must be symmetric (cuDNN's).
Result<SpatialAttrs> spatial_attrs(const Node& node, size_t spatial) {
  AttrReader a(node);
  SpatialAttrs s;
  s.kernel = a.get_ints("kernel_shape");
  s.pads = a.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  s.strides = a.get_ints("strides", std::vector<int64_t>(spatial, 1));
  s.dilations = a.get_ints("dilations", std::vector<int64_t>(spatial, 1));
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  RECUR_RETURN_IF_ERROR(a.status());
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    return not_implemented("auto_pad=" + auto_pad + " on the GPU");
  }
  if (auto_pad == "VALID") s.pads.assign(2 * spatial, 0);
  if (s.pads.size() != 2 * spatial || s.strides.size() != spatial ||
      s.dilations.size() != spatial) {
    return invalid_model(node.describe() + ": pads, strides or dilations do not match the rank");
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (s.pads[i] != s.pads[i + spatial]) {
      return not_implemented("asymmetric pads " + shape_to_string(s.pads) + " on cuDNN");
    }
    if (s.strides[i] < 1 || s.dilations[i] < 1 || s.pads[i] < 0) {
      return invalid_model(node.describe() + ": strides and dilations must be positive");
    }
  }
  return s;
}

Claim claim_spatial(const Node& n, const Graph& g, bool conv) {
  const DType t = input_dtype(n, g, 0);
  if (!is_float_type(t)) return Claim::decline("X is not a float type");
  const TypeInfo& x = g.value(n.inputs[0]).type;
  const int64_t rank = x.rank();
  if (rank != 3 && rank != 4 && rank != 5) {
    return Claim::decline("X must have a known rank of 3, 4 or 5 on cuDNN");
  }
  auto s = spatial_attrs(n, static_cast<size_t>(rank - 2));
  if (!s.ok()) return Claim::decline(s.status().message());
  AttrReader a(n);
  if (!conv) {
    if (a.get_int("ceil_mode", 0) != 0) return Claim::decline("ceil_mode=1 on cuDNN");
    if (n.op_type == "MaxPool") {
      if (n.has_output(1)) return Claim::decline("the Indices output is not on cuDNN");
      if (a.get_int("storage_order", 0) != 0) return Claim::decline("storage_order=1");
    }
    // cuDNN's pooling descriptor has no dilation; AveragePool has one from opset 19.
    for (int64_t d : s->dilations)
      if (d != 1) return Claim::decline("dilated pooling is not on cuDNN");
  }
  if (conv && n.has_input(1)) {
    const TypeInfo& w = g.value(n.inputs[1]).type;
    if (w.rank() >= 0 && w.rank() != rank) return Claim::decline("W's rank differs from X's");
  }
  return Claim::accept();
}

class ConvKernel final : public GpuKernel {
 public:
  explicit ConvKernel(int64_t group) : group_(group) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* w, need_input(ctx, 1));
    const Tensor* b = ctx.input(2);
    const size_t sp = static_cast<size_t>(x->rank() - 2);
    if (x->rank() < 3 || w->rank() != x->rank() || w->dtype() != x->dtype() ||
        (b && (b->dtype() != x->dtype() || b->numel() != w->dim(0)))) {
      return ctx.error(ErrorCode::kInvalidArgument, "X, W and B do not agree");
    }
    auto attrs = spatial_attrs(ctx.node(), sp);
    if (!attrs.ok()) return attrs.status().with_context(ctx.node().describe());
    if (x->dim(1) != w->dim(1) * group_ || w->dim(0) % group_ != 0) {
      return ctx.error(ErrorCode::kInvalidArgument, "channels of X " + shape_to_string(x->shape()) +
                                                        " and W " + shape_to_string(w->shape()) +
                                                        " disagree for group " +
                                                        std::to_string(group_));
    }
    Shape out = {x->dim(0), w->dim(0)};
    for (size_t i = 0; i < sp; ++i) {
      const int64_t k = (w->dim(static_cast<int64_t>(i) + 2) - 1) * attrs->dilations[i] + 1;
      const int64_t span = x->dim(static_cast<int64_t>(i) + 2) + 2 * attrs->pads[i] - k;
      if (span < 0)
        return ctx.error(ErrorCode::kInvalidArgument, "the kernel exceeds the padded input");
      out.push_back(span / attrs->strides[i] + 1);
    }
    if (!fits_int(x->shape()) || !fits_int(out) || !fits_int(w->shape())) {
      return ctx.error(ErrorCode::kInvalidArgument, "a size exceeds cuDNN's int32");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), out));
    if (y->numel() == 0) return ok_status();
    RECUR_ASSIGN_OR_RETURN(cudnnHandle_t h, run.sc.cudnn());
    TensorD xd, yd, bd;
    FilterD wd;
    ConvD cd;
    RECUR_CUDA_CHECK(cudnnCreateTensorDescriptor(&xd.h));
    RECUR_CUDA_CHECK(cudnnCreateTensorDescriptor(&yd.h));
    RECUR_CUDA_CHECK(cudnnCreateFilterDescriptor(&wd.h));
    RECUR_CUDA_CHECK(cudnnCreateConvolutionDescriptor(&cd.h));
    RECUR_RETURN_IF_ERROR(set_tensor(xd.h, x->dtype(), dims4(x->shape())));
    RECUR_RETURN_IF_ERROR(set_tensor(yd.h, x->dtype(), dims4(out)));
    const std::vector<int> wdims = dims4(w->shape());
    RECUR_CUDA_CHECK(cudnnSetFilterNdDescriptor(wd.h, cudnn_type(x->dtype()), CUDNN_TENSOR_NCHW,
                                                static_cast<int>(wdims.size()), wdims.data()));
    const size_t nsp = std::max<size_t>(sp, 2);
    std::vector<int> pads(nsp, 0), strides(nsp, 1), dil(nsp, 1);
    for (size_t i = 0; i < sp; ++i) {
      pads[i] = static_cast<int>(attrs->pads[i]);
      strides[i] = static_cast<int>(attrs->strides[i]);
      dil[i] = static_cast<int>(attrs->dilations[i]);
    }
    // Accumulate in float for float16, in the data type otherwise.
    const cudnnDataType_t acc =
        x->dtype() == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    RECUR_CUDA_CHECK(cudnnSetConvolutionNdDescriptor(cd.h, static_cast<int>(nsp), pads.data(),
                                                     strides.data(), dil.data(),
                                                     CUDNN_CROSS_CORRELATION, acc));
    RECUR_CUDA_CHECK(cudnnSetConvolutionGroupCount(cd.h, static_cast<int>(group_)));
    RECUR_CUDA_CHECK(cudnnSetConvolutionMathType(
        cd.h, x->dtype() == DType::kFloat16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    {
      const std::string key = shape_to_string(x->shape()) + shape_to_string(w->shape());
      std::lock_guard lock(mu_);
      auto it = algos_.find(key);
      if (it != algos_.end()) {
        algo = it->second;
      } else {
        cudnnConvolutionFwdAlgoPerf_t perf[8];
        int found = 0;
        RECUR_CUDA_CHECK(
            cudnnGetConvolutionForwardAlgorithm_v7(h, xd.h, wd.h, cd.h, yd.h, 8, &found, perf));
        for (int i = 0; i < found; ++i) {
          if (perf[i].status == CUDNN_STATUS_SUCCESS) {
            algo = perf[i].algo;
            break;
          }
        }
        algos_.emplace(key, algo);
      }
    }
    size_t ws_bytes = 0;
    RECUR_CUDA_CHECK(
        cudnnGetConvolutionForwardWorkspaceSize(h, xd.h, wd.h, cd.h, yd.h, algo, &ws_bytes));
    std::shared_ptr<void> ws;
    if (ws_bytes) {
      RECUR_ASSIGN_OR_RETURN(ws, allocate_device(ws_bytes, ctx.device().index));
    }
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const bool dbl = x->dtype() == DType::kFloat64;
    const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
    const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
    RECUR_CUDA_CHECK(cudnnConvolutionForward(h, one, xd.h, x->raw_data(), wd.h, w->raw_data(), cd.h,
                                             algo, ws.get(), ws_bytes, zero, yd.h, y->raw_data()));
    if (b) {
      RECUR_CUDA_CHECK(cudnnCreateTensorDescriptor(&bd.h));
      std::vector<int> bdims(dims4(out).size(), 1);
      bdims[1] = static_cast<int>(w->dim(0));
      RECUR_RETURN_IF_ERROR(set_tensor(bd.h, x->dtype(), bdims));
      RECUR_CUDA_CHECK(cudnnAddTensor(h, one, bd.h, b->raw_data(), one, yd.h, y->raw_data()));
    }
    return ok_status();
  }

 private:
  int64_t group_;
  mutable std::mutex mu_;
  mutable std::map<std::string, cudnnConvolutionFwdAlgo_t> algos_;
};

class PoolKernel final : public GpuKernel {
 public:
  PoolKernel(bool max, bool include_pad) : max_(max), include_pad_(include_pad) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    if (x->rank() < 3 || x->rank() > 5) {
      return ctx.error(ErrorCode::kInvalidArgument, "X must have rank 3, 4 or 5");
    }
    const size_t sp = static_cast<size_t>(x->rank() - 2);
    auto attrs = spatial_attrs(ctx.node(), sp);
    if (!attrs.ok()) return attrs.status().with_context(ctx.node().describe());
    if (attrs->kernel.size() != sp) {
      return ctx.error(ErrorCode::kInvalidModel, "kernel_shape does not match X's rank");
    }
    Shape out = {x->dim(0), x->dim(1)};
    for (size_t i = 0; i < sp; ++i) {
      const int64_t span =
          x->dim(static_cast<int64_t>(i) + 2) + 2 * attrs->pads[i] - attrs->kernel[i];
      if (span < 0)
        return ctx.error(ErrorCode::kInvalidArgument, "the window exceeds the padded input");
      out.push_back(span / attrs->strides[i] + 1);
    }
    if (!fits_int(x->shape()))
      return ctx.error(ErrorCode::kInvalidArgument, "X exceeds cuDNN's int32");
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), out));
    if (y->numel() == 0) return ok_status();
    RECUR_ASSIGN_OR_RETURN(cudnnHandle_t h, run.sc.cudnn());
    TensorD xd, yd;
    PoolD pd;
    RECUR_CUDA_CHECK(cudnnCreateTensorDescriptor(&xd.h));
    RECUR_CUDA_CHECK(cudnnCreateTensorDescriptor(&yd.h));
    RECUR_CUDA_CHECK(cudnnCreatePoolingDescriptor(&pd.h));
    RECUR_RETURN_IF_ERROR(set_tensor(xd.h, x->dtype(), dims4(x->shape())));
    RECUR_RETURN_IF_ERROR(set_tensor(yd.h, x->dtype(), dims4(out)));
    const size_t nsp = std::max<size_t>(sp, 2);
    std::vector<int> win(nsp, 1), pads(nsp, 0), strides(nsp, 1);
    for (size_t i = 0; i < sp; ++i) {
      win[i] = static_cast<int>(attrs->kernel[i]);
      pads[i] = static_cast<int>(attrs->pads[i]);
      strides[i] = static_cast<int>(attrs->strides[i]);
    }
    const cudnnPoolingMode_t mode = max_           ? CUDNN_POOLING_MAX_DETERMINISTIC
                                    : include_pad_ ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                   : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    RECUR_CUDA_CHECK(cudnnSetPoolingNdDescriptor(pd.h, mode, CUDNN_PROPAGATE_NAN,
                                                 static_cast<int>(nsp), win.data(), pads.data(),
                                                 strides.data()));
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const bool dbl = x->dtype() == DType::kFloat64;
    RECUR_CUDA_CHECK(cudnnPoolingForward(
        h, pd.h, dbl ? static_cast<const void*>(&one_d) : &one_f, xd.h, x->raw_data(),
        dbl ? static_cast<const void*>(&zero_d) : &zero_f, yd.h, y->raw_data()));
    return ok_status();
  }

 private:
  bool max_, include_pad_;
};

}  // namespace

void register_cudnn_op_kernels(KernelRegistry& r) {
  r.add({.op_type = "Conv",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t group = a.get_int("group", 1);
           RECUR_RETURN_IF_ERROR(a.status());
           if (group < 1) return ctx.error(ErrorCode::kInvalidModel, "group must be positive");
           return std::make_unique<ConvKernel>(group);
         },
         .claim = [](const Node& n, const Graph& g) { return claim_spatial(n, g, true); }});
  for (const char* op : {"MaxPool", "AveragePool"}) {
    const bool max = std::string(op) == "MaxPool";
    r.add({.op_type = op,
           .since = 1,
           .create = [max](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
             AttrReader a(ctx.node());
             const bool include_pad = a.get_int("count_include_pad", 0) != 0;
             RECUR_RETURN_IF_ERROR(a.status());
             return std::make_unique<PoolKernel>(max, include_pad);
           },
           .claim = [](const Node& n, const Graph& g) { return claim_spatial(n, g, false); }});
  }
}

}  // namespace recur::cuda::ops
