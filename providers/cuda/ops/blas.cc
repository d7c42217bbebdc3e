// cuda-generic's MatMul (numpy batching and broadcasting), Gemm, two-operand Einsum and
// ConvTranspose (W^T X, then col2im) on cuBLAS. float32 and float64 with exact math (no TF32);
// float16 with float32 accumulation.
#include <cuda_fp16.h>

#include "providers/cuda/ops/gpu_kernel.h"

namespace recur::cuda::ops {

namespace {

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat64, DType::kFloat16};

// Row-major C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C for `batch` matrices, as the
// column-major product C^T = op(B)^T op(A)^T.
Status gemm(const Blas& blas, DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
            double alpha, const void* A, int64_t lda, int64_t sa, const void* B, int64_t ldb,
            int64_t sb, double beta, void* C, int64_t ldc, int64_t sc, int64_t batch) {
  for (int64_t v : {M, N, K, lda, ldb, ldc, batch}) {
    if (v > INT32_MAX) return invalid_argument("a GEMM dimension exceeds cuBLAS's int32");
  }
  const cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(N), n = static_cast<int>(M), k = static_cast<int>(K);
  if (t == DType::kFloat32) {
    const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
    RECUR_CUDA_CHECK(blas.api->sgemm_strided_batched(
        blas.handle, opb, opa, m, n, k, &al, static_cast<const float*>(B), static_cast<int>(ldb),
        sb, static_cast<const float*>(A), static_cast<int>(lda), sa, &be, static_cast<float*>(C),
        static_cast<int>(ldc), sc, static_cast<int>(batch)));
  } else if (t == DType::kFloat64) {
    RECUR_CUDA_CHECK(blas.api->dgemm_strided_batched(
        blas.handle, opb, opa, m, n, k, &alpha, static_cast<const double*>(B),
        static_cast<int>(ldb), sb, static_cast<const double*>(A), static_cast<int>(lda), sa, &beta,
        static_cast<double*>(C), static_cast<int>(ldc), sc, static_cast<int>(batch)));
  } else {
    const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
    RECUR_CUDA_CHECK(blas.api->gemm_strided_batched_ex(
        blas.handle, opb, opa, m, n, k, &al, B, CUDA_R_16F, static_cast<int>(ldb), sb, A,
        CUDA_R_16F, static_cast<int>(lda), sa, &be, C, CUDA_R_16F, static_cast<int>(ldc), sc,
        static_cast<int>(batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  return ok_status();
}

class MatMulKernel final : public GpuKernel {
 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, need_input(ctx, 1));
    if (a->dtype() != b->dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument, "A and B differ in type");
    }
    auto plan = matmul_plan(a->shape(), b->shape());
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, a->dtype(), plan->out));
    if (y->numel() == 0) return ok_status();
    if (plan->K == 0) {
      RECUR_CUDA_CHECK(cudaMemsetAsync(y->raw_data(), 0, y->nbytes(), run.stream));
      return ok_status();
    }
    RECUR_ASSIGN_OR_RETURN(const Blas blas, run.sc.cublas());
    const int64_t M = plan->M, N = plan->N, K = plan->K;
    const size_t e = dtype_size(a->dtype());
    if (plan->strided) {
      return gemm(blas, a->dtype(), false, false, M, N, K, 1.0, a->raw_data(), K, plan->a_stride,
                  b->raw_data(), N, plan->b_stride, 0.0, y->raw_data(), N, M * N, plan->batch);
    }
    // General broadcasting: one GEMM per batch.
    for (int64_t q = 0; q < plan->batch; ++q) {
      RECUR_RETURN_IF_ERROR(gemm(
          blas, a->dtype(), false, false, M, N, K, 1.0,
          static_cast<const char*>(a->raw_data()) + static_cast<size_t>(plan->a_offsets[q]) * e, K,
          0, static_cast<const char*>(b->raw_data()) + static_cast<size_t>(plan->b_offsets[q]) * e,
          N, 0, 0.0, static_cast<char*>(y->raw_data()) + static_cast<size_t>(q * M * N) * e, N, 0,
          1));
    }
    return ok_status();
  }
};

class GemmKernel final : public GpuKernel {
 public:
  GemmKernel(bool ta, bool tb, float alpha, float beta)
      : ta_(ta), tb_(tb), alpha_(alpha), beta_(beta) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, need_input(ctx, 1));
    const Tensor* c = ctx.input(2);
    if (a->rank() != 2 || b->rank() != 2 || a->dtype() != b->dtype() ||
        (c && c->dtype() != a->dtype())) {
      return ctx.error(ErrorCode::kInvalidArgument, "A and B must be 2-D of one type");
    }
    const int64_t M = ta_ ? a->dim(1) : a->dim(0), K = ta_ ? a->dim(0) : a->dim(1);
    const int64_t Kb = tb_ ? b->dim(1) : b->dim(0), N = tb_ ? b->dim(0) : b->dim(1);
    if (K != Kb) {
      return ctx.error(ErrorCode::kInvalidArgument, "A " + shape_to_string(a->shape()) + " and B " +
                                                        shape_to_string(b->shape()) +
                                                        " do not agree on K");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, a->dtype(), {M, N}));
    if (y->numel() == 0) return ok_status();
    double beta = 0.0;
    if (c && beta_ != 0.0f) {
      // Y starts as C broadcast to [M, N]; the GEMM adds alpha*A*B to beta*Y.
      auto s = broadcast_strided(c->shape(), {M, N});
      if (!s.ok()) return s.status().with_context(ctx.node().describe());
      RECUR_LAUNCH_CHECK(ctx, launch_strided_copy(dtype_size(c->dtype()), *s, c->raw_data(),
                                                  y->raw_data(), y->numel(), run.stream));
      beta = beta_;
    }
    if (K == 0) {
      if (beta == 0.0) RECUR_CUDA_CHECK(cudaMemsetAsync(y->raw_data(), 0, y->nbytes(), run.stream));
      if (beta != 0.0 && beta != 1.0) {
        return ctx.error(ErrorCode::kNotImplemented, "K=0 with beta other than 0 or 1");
      }
      return ok_status();
    }
    RECUR_ASSIGN_OR_RETURN(const Blas blas, run.sc.cublas());
    return gemm(blas, a->dtype(), ta_, tb_, M, N, K, alpha_, a->raw_data(), a->dim(1), 0,
                b->raw_data(), b->dim(1), 0, beta, y->raw_data(), N, 0, 1);
  }

 private:
  bool ta_, tb_;
  float alpha_, beta_;
};

// Einsum of two operands as one strided-batched GEMM (einsum_gpu_plan): each operand copied
// dense where its labels do not already lie as [batch, rows, columns], and the product copied
// into the output's order where it is not already in it.
class EinsumKernel final : public GpuKernel {
 public:
  explicit EinsumKernel(einsum::Parsed p) : p_(std::move(p)) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    if (ctx.num_inputs() != 2) {
      return ctx.error(ErrorCode::kInvalidArgument, "the GPU Einsum takes two operands");
    }
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, need_input(ctx, 1));
    if (a->dtype() != b->dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument, "the operands differ in type");
    }
    auto plan = einsum_gpu_plan(p_, a->shape(), b->shape());
    if (!plan.ok()) return plan.status().with_context(ctx.node().describe());
    const EinsumGpuPlan& g = *plan;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, a->dtype(), g.out));
    if (y->numel() == 0) return ok_status();
    if (g.kt == 0) {
      RECUR_CUDA_CHECK(cudaMemsetAsync(y->raw_data(), 0, y->nbytes(), run.stream));
      return ok_status();
    }
    const size_t e = dtype_size(a->dtype());
    // Device copies live until the run's stream has used them (Tensor frees in stream order).
    Tensor da, db, dy;
    auto dense = [&](const Tensor& t, const Strided& s, int64_t n, Tensor& copy) -> Status {
      if (s.contiguous) return ok_status();
      copy = Tensor::empty(t.dtype(), {n}, ctx.device());
      RECUR_LAUNCH_CHECK(ctx,
                         launch_strided_copy(e, s, t.raw_data(), copy.raw_data(), n, run.stream));
      return ok_status();
    };
    RECUR_RETURN_IF_ERROR(dense(*a, g.a, g.bt * g.mt * g.kt, da));
    RECUR_RETURN_IF_ERROR(dense(*b, g.b, g.bt * g.kt * g.nt, db));
    const void* pa = g.a.contiguous ? a->raw_data() : da.raw_data();
    const void* pb = g.b.contiguous ? b->raw_data() : db.raw_data();
    if (!g.y.contiguous) dy = Tensor::empty(a->dtype(), {g.bt * g.mt * g.nt}, ctx.device());
    void* py = g.y.contiguous ? y->raw_data() : dy.raw_data();
    RECUR_ASSIGN_OR_RETURN(const Blas blas, run.sc.cublas());
    RECUR_RETURN_IF_ERROR(gemm(blas, a->dtype(), false, false, g.mt, g.nt, g.kt, 1.0, pa, g.kt,
                               g.mt * g.kt, pb, g.nt, g.kt * g.nt, 0.0, py, g.nt, g.mt * g.nt,
                               g.bt));
    if (!g.y.contiguous) {
      RECUR_LAUNCH_CHECK(
          ctx, launch_strided_copy(e, g.y, dy.raw_data(), y->raw_data(), y->numel(), run.stream));
    }
    return ok_status();
  }

 private:
  einsum::Parsed p_;
};

// ConvTranspose (runtime/graph/conv_transpose_shape.h's geometry): per batch row, one
// strided-batched GEMM over the groups writes W_g^T X_g into columns [m, taps, x...]; then
// col2im_element gathers each output element's columns and adds the bias.
class ConvTransposeKernel final : public GpuKernel {
 public:
  explicit ConvTransposeKernel(ConvTransposeAttrs a) : a_(std::move(a)) {}

 protected:
  Status compute(KernelContext& ctx, GpuRun& run) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, need_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* w, need_input(ctx, 1));
    const Tensor* b = ctx.input(2);
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype())) {
      return ctx.error(ErrorCode::kInvalidArgument, "X, W and B must have the same dtype");
    }
    auto s = resolve_conv_transpose(a_, x->shape(), w->shape());
    if (!s.ok()) return s.status().with_context(ctx.node().describe());
    if (b && (b->rank() != 1 || b->dim(0) != s->m)) {
      return ctx.error(
          ErrorCode::kInvalidArgument,
          "B " + shape_to_string(b->shape()) + " should be [" + std::to_string(s->m) + "]");
    }
    auto g = col2im_plan(*s, b != nullptr);
    if (!g.ok()) return g.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * y, new_output(ctx, 0, x->dtype(), s->y));
    if (y->numel() == 0) return ok_status();
    const int64_t groups = a_.group, cg = s->c / groups, mg = s->m / groups;
    const int64_t rows = mg * g->taps;  // of W_g^T: an output channel's taps
    Tensor cols = Tensor::empty(x->dtype(), {s->n * s->m * g->taps * g->p_in}, ctx.device());
    const size_t e = dtype_size(x->dtype());
    if (cg == 0 || g->p_in == 0) {
      RECUR_CUDA_CHECK(cudaMemsetAsync(cols.raw_data(), 0, cols.nbytes(), run.stream));
    } else {
      RECUR_ASSIGN_OR_RETURN(const Blas blas, run.sc.cublas());
      for (int64_t n = 0; n < s->n; ++n) {
        const char* xn =
            static_cast<const char*>(x->raw_data()) + static_cast<size_t>(n * s->c * g->p_in) * e;
        char* cn = static_cast<char*>(cols.raw_data()) +
                   static_cast<size_t>(n * s->m * g->taps * g->p_in) * e;
        RECUR_RETURN_IF_ERROR(gemm(blas, x->dtype(), true, false, rows, g->p_in, cg, 1.0,
                                   w->raw_data(), rows, cg * rows, xn, g->p_in, cg * g->p_in, 0.0,
                                   cn, g->p_in, rows * g->p_in, groups));
      }
    }
    RECUR_LAUNCH_CHECK(ctx,
                       launch_col2im(x->dtype(), *g, cols.raw_data(), b ? b->raw_data() : nullptr,
                                     y->raw_data(), y->numel(), run.stream));
    return ok_status();
  }

 private:
  ConvTransposeAttrs a_;
};

}  // namespace

void register_blas_kernels(KernelRegistry& r) {
  r.add({.op_type = "MatMul",
         .since = 1,
         .create = [](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<MatMulKernel>();
         },
         .claim = claim_input_types(0, kFloats)});
  r.add({.op_type = "Gemm",
         .since = 7,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const bool ta = a.get_int("transA", 0) != 0;
           const bool tb = a.get_int("transB", 0) != 0;
           const float alpha = a.get_float("alpha", 1.0f);
           const float beta = a.get_float("beta", 1.0f);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::make_unique<GemmKernel>(ta, tb, alpha, beta);
         },
         .claim = claim_input_types(0, kFloats)});
  r.add({.op_type = "ConvTranspose",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           auto a = ConvTransposeAttrs::read(ctx.node());
           if (!a.ok()) return a.status().with_context(ctx.node().describe());
           return std::make_unique<ConvTransposeKernel>(std::move(a).value());
         },
         .claim = [](const Node& n, const Graph& g) -> Claim {
           const TypeInfo& x = g.value(n.inputs[0]).type;
           if (x.has_rank() && (x.rank() < 3 || x.rank() > 5)) {
             return Claim::decline("the GPU ConvTranspose takes 1 to 3 spatial axes");
           }
           return claim_input_types(0, kFloats)(n, g);
         }});
  r.add({.op_type = "Einsum",
         .since = 12,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           auto p = einsum::parse_node_equation(ctx.node());
           if (!p.ok()) return p.status().with_context(ctx.node().describe());
           return std::make_unique<EinsumKernel>(std::move(p).value());
         },
         .claim = [](const Node& n, const Graph& g) -> Claim {
           if (n.inputs.size() != 2) return Claim::decline("the GPU Einsum takes two operands");
           const Attribute* eq = n.attr("equation");
           if (!einsum::parse_equation(eq ? eq->s : "").ok()) {
             return Claim::decline("the equation does not parse");
           }
           return claim_input_types(0, kFloats)(n, g);
         }});
}

}  // namespace recur::cuda::ops
