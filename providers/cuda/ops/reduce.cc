// cuda-generic's reductions (ReduceSum, ReduceMean, ...), GlobalAveragePool, ArgMax/ArgMin,
// Softmax/LogSoftmax, LayerNormalization and TopK.
#include "providers/cuda/ops/gpu_kernel.h"

namespace recur::cuda::ops {

namespace {

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64, DType::kFloat16};

struct ReduceDef {
  const char* op;
  int32_t code;
  int axes_input_since;  // the opset from which axes is an input
  bool ints;             // int32/int64 too
};

class ReduceKernel final : public GpuKernel {
 public:
  ReduceKernel(ReduceDef def, std::vector<int64_t> axes, bool keepdims, bool noop)
      : def_(def), axes_(std::move(axes)), keepdims_(keepdims), noop_(noop) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    std::vector<int64_t> axes = axes_;
    if (ctx.node().opset >= def_.axes_input_since) {
      RECUR_ASSIGN_OR_RETURN(auto a, host_ints(ctx, 1));
      axes = a ? *a : std::vector<int64_t>{};
    }
    auto plan = reduce_plan(x->shape(), axes, keepdims_, noop_);
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    if (plan->identity) return ctx.set_output(0, *x);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), plan->out));
    const int64_t n_out = y->numel();
    if (n_out == 0) return ok_status();
    const void* src = x->raw_data();
    Tensor moved;
    if (!plan->perm.empty()) {
      Shape tshape;
      RECUR_ASSIGN_OR_RETURN(Strided s, transpose_strided(x->shape(), plan->perm, &tshape));
      moved = Tensor::empty(x->dtype(), tshape, ctx.device());
      RECUR_LAUNCH_CHECK(ctx, launch_strided_copy(dtype_size(x->dtype()), s, x->raw_data(),
                                                  moved.raw_data(), moved.numel(), run.stream));
      src = moved.raw_data();
    }
    RECUR_LAUNCH_CHECK(ctx, launch_reduce(x->dtype(), def_.code, plan->index, src, y->raw_data(),
                                          n_out, run.stream));
    return ok_status();
  }

 private:
  ReduceDef def_;
  std::vector<int64_t> axes_;
  bool keepdims_, noop_;
};

// The mean over every spatial axis, the reduction kernel's ReduceMean over global_pool_axes. Not
// GlobalMaxPool: the reduction's max propagates NaN, the reference provider's pools skip it.
class GlobalAveragePoolKernel final : public GpuKernel {
 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    if (x->rank() < 2) {
      return ctx.error(
          ErrorCode::kInvalidArgument,
          "X must have rank >= 2 ([N, C, spatial...]), got " + shape_to_string(x->shape()));
    }
    auto plan = reduce_plan(x->shape(), global_pool_axes(x->rank()), true, true);
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    if (plan->identity) return ctx.set_output(0, *x);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), plan->out));
    if (y->numel() == 0) return ok_status();
    if (x->numel() == 0) {  // empty spatial axes: a mean of nothing is 0, as on the reference
      RECUR_CUDA_CHECK(cudaMemsetAsync(y->raw_data(), 0, y->nbytes(), run.stream));
      return ok_status();
    }
    RECUR_LAUNCH_CHECK(ctx, launch_reduce(x->dtype(), kReduceMean, plan->index, x->raw_data(),
                                          y->raw_data(), y->numel(), run.stream));
    return ok_status();
  }
};

class ArgKernel final : public GpuKernel {
 public:
  ArgKernel(bool is_max, int64_t axis, bool keepdims, bool last)
      : is_max_(is_max), axis_(axis), keepdims_(keepdims), last_(last) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis_, x->rank(), "axis"));
    if (x->dim(a) == 0) return ctx.error(ErrorCode::kInvalidArgument, "reducing an empty axis");
    Shape out;
    for (int64_t d = 0; d < x->rank(); ++d) {
      if (d != a) {
        out.push_back(x->dim(d));
      } else if (keepdims_) {
        out.push_back(1);
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, DType::kInt64, out));
    RECUR_LAUNCH_CHECK(ctx, launch_arg(x->dtype(), is_max_, last_, around_axis(x->shape(), a),
                                       x->raw_data(), y->data<int64_t>(), y->numel(), run.stream));
    return ok_status();
  }

 private:
  bool is_max_;
  int64_t axis_;
  bool keepdims_, last_;
};

class SoftmaxKernel final : public GpuKernel {
 public:
  SoftmaxKernel(bool log, int64_t axis) : log_(log), axis_(axis) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis_, x->rank(), "axis"));
    ReduceIndex r;
    if (ctx.node().opset < 13) {
      // The input is coerced to 2-D at `axis`.
      for (int64_t d = 0; d < x->rank(); ++d) (d < a ? r.outer : r.reduced) *= x->dim(d);
    } else {
      r = around_axis(x->shape(), a);
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), x->shape()));
    RECUR_LAUNCH_CHECK(ctx, launch_softmax(x->dtype(), log_, r, x->raw_data(), y->raw_data(),
                                           r.outer * r.inner, run.stream));
    return ok_status();
  }

 private:
  bool log_;
  int64_t axis_;
};

class LayerNormKernel final : public GpuKernel {
 public:
  LayerNormKernel(int64_t axis, float eps) : axis_(axis), eps_(eps) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, need_input(ctx, 1));
    const Tensor* bias = ctx.input(2);
    RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis_, x->rank(), "axis"));
    const Shape norm(x->shape().begin() + a, x->shape().end());
    LayerNormArgs g;
    g.epsilon = eps_;
    g.outer = 1;
    for (int64_t d = 0; d < a; ++d) g.outer *= x->dim(d);
    g.reduced = shape_numel(norm);
    if (scale->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype())) {
      return ctx.error(ErrorCode::kInvalidArgument, "Scale and B must have X's type");
    }
    auto ss = broadcast_strided(scale->shape(), norm);
    if (!ss.ok()) return ss.status().with_context(ctx.node().describe());
    g.scale = *ss;
    if (bias) {
      auto bs = broadcast_strided(bias->shape(), norm);
      if (!bs.ok()) return bs.status().with_context(ctx.node().describe());
      g.bias = *bs;
      g.has_bias = 1;
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), x->shape()));
    if (g.reduced == 0 || g.outer == 0) return ok_status();
    RECUR_LAUNCH_CHECK(
        ctx, launch_layer_norm(x->dtype(), g, x->raw_data(), scale->raw_data(),
                               bias ? bias->raw_data() : nullptr, y->raw_data(), run.stream));
    return ok_status();
  }

 private:
  int64_t axis_;
  float eps_;
};

class TopKKernel final : public GpuKernel {
 public:
  TopKKernel(int64_t axis, bool largest, int64_t k_attr)
      : axis_(axis), largest_(largest), k_attr_(k_attr) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    int64_t K = k_attr_;
    if (ctx.node().opset >= 10) {
      RECUR_ASSIGN_OR_RETURN(auto k, host_ints(ctx, 1));
      if (!k || k->size() != 1)
        return ctx.error(ErrorCode::kInvalidArgument, "K must be one value");
      K = (*k)[0];
    }
    RECUR_ASSIGN_OR_RETURN(const int64_t a, axis_in(axis_, x->rank(), "axis"));
    if (K < 0 || K > x->dim(a)) {
      return ctx.error(ErrorCode::kInvalidArgument, "K=" + std::to_string(K) + " is outside [0, " +
                                                        std::to_string(x->dim(a)) + "]");
    }
    Shape out = x->shape();
    out[static_cast<size_t>(a)] = K;
    RECUR_ASSIGN_OR_RETURN(Tensor * v, new_output(ctx, 0, x->dtype(), out));
    RECUR_ASSIGN_OR_RETURN(Tensor * ix, new_output(ctx, 1, DType::kInt64, out));
    if (K == 0 || x->numel() == 0) return ok_status();
    RECUR_LAUNCH_CHECK(
        ctx, launch_top_k(x->dtype(), around_axis(x->shape(), a), K, largest_, x->raw_data(),
                          v->raw_data(), ix->data<int64_t>(), x->numel(), run.stream));
    return ok_status();
  }

 private:
  int64_t axis_;
  bool largest_;
  int64_t k_attr_;
};

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  const ReduceDef defs[] = {
      {"ReduceSum", kReduceSum, 13, true},        {"ReduceMean", kReduceMean, 18, false},
      {"ReduceMax", kReduceMax, 18, true},        {"ReduceMin", kReduceMin, 18, true},
      {"ReduceProd", kReduceProd, 18, true},      {"ReduceSumSquare", kReduceSumSquare, 18, false},
      {"ReduceL1", kReduceL1, 18, false},         {"ReduceL2", kReduceL2, 18, false},
      {"ReduceLogSum", kReduceLogSum, 18, false}, {"ReduceLogSumExp", kReduceLogSumExp, 18, false},
  };
  for (const ReduceDef& d : defs) {
    std::vector<DType> types = kFloats;
    if (d.ints) {
      types.push_back(DType::kInt32);
      types.push_back(DType::kInt64);
    }
    r.add({.op_type = d.op,
           .since = 1,
           .create = [d](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
             AttrReader a(ctx.node());
             auto axes = a.get_ints("axes");
             const bool keep = a.get_int("keepdims", 1) != 0;
             const bool noop = a.get_int("noop_with_empty_axes", 0) != 0;
             RECUR_RETURN_IF_ERROR(a.status());
             return std::make_unique<ReduceKernel>(d, std::move(axes), keep, noop);
           },
           .claim = claim_input_types(0, types),
           .host_inputs = {1}});
  }
  r.add({.op_type = "GlobalAveragePool",
         .since = 1,
         .create = [](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<GlobalAveragePoolKernel>();
         },
         .claim = claim_input_types(0, kFloats)});
  for (auto [op, is_max] : {std::pair<const char*, bool>{"ArgMax", true}, {"ArgMin", false}}) {
    r.add({.op_type = op,
           .since = 1,
           .create = [is_max = is_max](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
             AttrReader a(ctx.node());
             const int64_t axis = a.get_int("axis", 0);
             const bool keep = a.get_int("keepdims", 1) != 0;
             const bool last = a.get_int("select_last_index", 0) != 0;
             RECUR_RETURN_IF_ERROR(a.status());
             return std::make_unique<ArgKernel>(is_max, axis, keep, last);
           },
           .claim = claim_input_types(0, {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                          DType::kInt32, DType::kInt64})});
  }
  for (auto [op, log] : {std::pair<const char*, bool>{"Softmax", false}, {"LogSoftmax", true}}) {
    r.add({.op_type = op,
           .since = 1,
           .create = [log = log](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
             AttrReader a(ctx.node());
             const int64_t axis = a.get_int("axis", ctx.node().opset >= 13 ? -1 : 1);
             RECUR_RETURN_IF_ERROR(a.status());
             return std::make_unique<SoftmaxKernel>(log, axis);
           },
           .claim = claim_input_types(0, kFloats)});
  }
  r.add({.op_type = "LayerNormalization",
         .since = 17,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.get_int("axis", -1);
           const float eps = a.get_float("epsilon", 1e-5f);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<LayerNormKernel>(axis, eps);
         },
         .claim =
             [](const Node& n, const Graph& g) {
               for (size_t i = 1; i < n.outputs.size(); ++i) {
                 if (n.has_output(i) && (!g.value(n.outputs[i]).consumers.empty() ||
                                         g.value(n.outputs[i]).is_graph_output)) {
                   return Claim::decline("the Mean and InvStdDev outputs are not on the GPU");
                 }
               }
               return claim_input_types(0, kFloats)(n, g);
             }});
  r.add({.op_type = "TopK",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.get_int("axis", -1);
           const bool largest = a.get_int("largest", 1) != 0;
           const int64_t k = a.get_int("k", 0);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<TopKKernel>(axis, largest, k);
         },
         .claim = claim_input_types(
             0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32, DType::kInt64}),
         .host_inputs = {1}});
}

}  // namespace recur::cuda::ops
