// MatMul (numpy semantics: 1-D operands promoted, batch dimensions broadcast) through oneDNN's
// matmul primitive; a constant B is reordered once into the layout the primitive prefers.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/layout.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

// One pair of input shapes: the output shape and the primitive. With a constant B, the
// primitive takes B in the layout oneDNN prefers ("any"), reordered once here: the plain-layout
// GEMM packs B again on every call, which for the small A of batch-1 models is most of its work.
struct MatMulPlan {
  Shape out;
  int64_t k = 0;
  memory::desc a, b, y;  // b: the layout the primitive reads B in
  CachedPrimitive prim;
  std::shared_ptr<AlignedBuffer> packed_b;  // B in that layout, when B is constant
};

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(int threads, Tensor constant_b, std::string what, bool small)
      : threads_(threads), constant_b_(std::move(constant_b)), what_(std::move(what)) {
    // A small constant B also takes recur's own loop (avx512.h): below threads_for's bound a
    // oneDNN call costs more than the product, and its primitive a few MiB of code and JIT.
    if (small && constant_b_.defined() && constant_b_.rank() == 2 &&
        constant_b_.numel() <= kSmallMaxB && avx512::have_avx512()) {
      small_ = std::make_unique<avx512::PackedMatrix>(
          avx512::pack_matrix(constant_b_.data<float>(), constant_b_.dim(0), constant_b_.dim(1),
                              false, 1.0f, nullptr, 0, 0.0f));
    }
  }

  bool small() const { return small_ != nullptr; }

  Status run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return ctx.error(ErrorCode::kInvalidArgument, "MatMul needs inputs A and B");
    for (const Tensor* t : {a, b}) {
      if (t->dtype() != DType::kFloat32 || !t->is_cpu()) {
        return ctx.error(ErrorCode::kNotImplemented,
                         "the oneDNN MatMul runs float32 on the host, got " +
                             std::string(dtype_name(t->dtype())));
      }
      if (t->rank() == 0) return ctx.error(ErrorCode::kInvalidArgument, "MatMul of a scalar");
    }
    if (small_ && a->dim(-1) == small_->K && b->shape() == constant_b_.shape()) {
      const int64_t rows = a->numel() / std::max<int64_t>(1, small_->K);
      if (static_cast<double>(rows) * static_cast<double>(small_->K * small_->N) < kSmallMaxMacs)
        return run_small(ctx, *a, rows);
    }
    RECUR_ASSIGN_OR_RETURN(auto plan, cache_.get(std::make_tuple(a->shape(), b->shape()),
                                                 [&] { return make_plan(ctx, *a, *b); }));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, plan->out));
    if (y->numel() == 0) return ok_status();
    if (plan->k == 0) {
      std::memset(y->raw_data(), 0, y->nbytes());
      return ok_status();
    }
    const void* bdata = plan->packed_b ? plan->packed_b->data : b->raw_data();
    return execute_primitive(plan->prim,
                             {{DNNL_ARG_SRC, plan->a, a->raw_data()},
                              {DNNL_ARG_WEIGHTS, plan->b, bdata},
                              {DNNL_ARG_DST, plan->y, y->raw_data()}},
                             scratch_, what_);
  }

 private:
  Result<MatMulPlan> make_plan(const KernelContext& ctx, const Tensor& a, const Tensor& b) const {
    Shape sa = a.shape(), sb = b.shape();
    const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    if (a1) sa.insert(sa.begin(), 1);
    if (b1) sb.push_back(1);
    const size_t r = std::max(sa.size(), sb.size());
    sa.insert(sa.begin(), r - sa.size(), 1);
    sb.insert(sb.begin(), r - sb.size(), 1);
    const int64_t M = sa[r - 2], K = sa[r - 1], N = sb[r - 1];
    if (sb[r - 2] != K) {
      return ctx.error(ErrorCode::kInvalidArgument, "shapes " + shape_to_string(a.shape()) +
                                                        " and " + shape_to_string(b.shape()) +
                                                        " do not multiply (K " + std::to_string(K) +
                                                        " vs " + std::to_string(sb[r - 2]) + ")");
    }
    Shape so(r);
    for (size_t i = 0; i + 2 < r; ++i) {
      if (sa[i] != sb[i] && sa[i] != 1 && sb[i] != 1) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "batch dimensions of " + shape_to_string(a.shape()) + " and " +
                             shape_to_string(b.shape()) + " do not broadcast");
      }
      so[i] = sa[i] == 1 ? sb[i] : sa[i];
    }
    so[r - 2] = M;
    so[r - 1] = N;
    MatMulPlan plan;
    for (size_t i = 0; i + 2 < r; ++i) plan.out.push_back(so[i]);
    if (!a1) plan.out.push_back(M);
    if (!b1) plan.out.push_back(N);
    plan.k = K;
    int64_t numel = 1;
    for (int64_t d : so) numel *= d;
    if (numel == 0 || K == 0) return plan;
    if (r > 12) return ctx.error(ErrorCode::kNotImplemented, "rank above 12");
    plan.a = dense_desc(sa);
    plan.b = dense_desc(sb);
    plan.y = dense_desc(so);
    const int threads = threads_for(static_cast<double>(numel) * static_cast<double>(K), threads_);
    auto make = [&](const memory::desc& bd) {
      return make_primitive<dnnl::matmul>([&] { return dnnl::matmul::desc(plan.a, bd, plan.y); },
                                          user_scratchpad_attr(), threads, what_);
    };
    if (constant_b_.defined() && constant_b_.shape() == b.shape()) {
      Result<CachedPrimitive> any =
          make(memory::desc(sb, memory::data_type::f32, memory::format_tag::any));
      if (any.ok() && !generic_impl(any->impl)) {
        const_dnnl_primitive_desc_t pd = any->primitive.get_primitive_desc();
        const memory::desc packed(*dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
        plan.packed_b = std::make_shared<AlignedBuffer>(packed.get_size());
        RECUR_RETURN_IF_ERROR(dnnl_try(what_, [&] {
          ThreadScope scope(1);
          dnnl::memory from = make_memory(plan.b, constant_b_.raw_data());
          dnnl::memory to = make_memory(packed, plan.packed_b->data);
          dnnl::reorder(from, to).execute(thread_stream(), from, to);
          thread_stream().wait();
        }));
        plan.b = packed;
        plan.prim = std::move(any).value();
        return plan;
      }
    }
    RECUR_ASSIGN_OR_RETURN(plan.prim, make(plan.b));
    return plan;
  }

  // A [..., K] by the packed B into [..., N] (A of rank 1: [N]).
  Status run_small(KernelContext& ctx, const Tensor& a, int64_t rows) const {
    Shape out = a.shape();
    out.pop_back();
    out.push_back(small_->N);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    ScratchPool::Lease scratch =
        scratch_.acquire(static_cast<size_t>(avx512::kRowBlock * small_->Np) * sizeof(float));
    avx512::multiply_matrix(*small_, a.data<float>(), rows, y->data<float>(),
                            static_cast<float*>(scratch.data()));
    return ok_status();
  }

  static constexpr int64_t kSmallMaxB = int64_t{1} << 18;  // 1 MiB of B
  static constexpr double kSmallMaxMacs = 4194304.0;       // threads_for's one-thread bound

  int threads_;
  // B when it is a constant of the graph (at compile), reordered once per shape plan.
  Tensor constant_b_;
  std::unique_ptr<avx512::PackedMatrix> small_;  // B for recur's own loop, when small
  std::string what_;                             // the node, for errors
  mutable PrimCache<std::tuple<Shape, Shape>, MatMulPlan> cache_;
  mutable ScratchPool scratch_;
};

}  // namespace

void register_matmul(KernelRegistry& r) {
  r.add({.op_type = "MatMul",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           const Tensor* b = ctx.constant_input(1);
           Tensor constant_b = b && b->dtype() == DType::kFloat32 && b->is_cpu() ? *b : Tensor();
           auto k =
               std::make_unique<MatMulKernel>(options_of(ctx).max_threads, std::move(constant_b),
                                              ctx.node().describe(), options_of(ctx).small_cells);
           if (k->small())
             ctx.note("B packed at load for recur's own loop (products under 4M multiply-adds)");
           return std::unique_ptr<Kernel>(std::move(k));
         },
         .claim =
             [](const Node& n, const Graph& g) {
               Claim c = claim_float32_input(n, g, 0);
               return c.yes ? claim_float32_input(n, g, 1) : c;
             }});
}

}  // namespace recur::onednn
