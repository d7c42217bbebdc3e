// Gemm: Y = alpha * op(A) * op(B) + beta * C through oneDNN's matmul. A constant B is packed at
// load (packed_b.h), alpha folded in, and a constant C of one value or one row becomes the
// primitive's bias; otherwise the transposes are strides, alpha the output scale and beta * C
// (broadcast) is added by a sum post-op.
#include <cstring>
#include <tuple>
#include <vector>

#include "providers/onednn/common/avx2_panels.h"
#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"
#include "providers/onednn/nn/packed_b.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

// C of one value or one row ([], [1], [N], [1, N]): it folds into a bias.
bool row_like(const Tensor& c, int64_t N) {
  return c.rank() <= 2 && (c.numel() == 1 || c.numel() == N) && (c.rank() < 2 || c.dim(0) == 1);
}

class GemmKernel final : public Kernel {
 public:
  GemmKernel(bool trans_a, bool trans_b, float alpha, float beta, Threads threads, std::string what,
             bool chunk_rows, bool own_loops)
      : own_loops_(own_loops),
        trans_a_(trans_a),
        trans_b_(trans_b),
        alpha_(alpha),
        beta_(beta),
        threads_(threads),
        what_(std::move(what)),
        packed_plans_(chunk_rows) {}

  // A constant small B (and C of one value or one row, or none) also takes recur's own loop
  // (avx512.h), alpha and beta * C folded in: below threads_for's bound a oneDNN call costs
  // more than the product, and its primitive a few MiB of code and JIT. B is packed in
  // oneDNN's layout, which products too large for the loop read as it is (late_), with C as
  // the bias: the kernel then reads neither ONNX copy. True when it does. Before, those
  // products ran on the plain B, which oneDNN packs again on every call: [500, 256] by a
  // [128, 256] B (a Linear over T N rows) took 0.20 ms against 0.17 for MatMul and Add.
  bool pack_small(const Tensor* b, const Tensor* c, bool has_c) {
    if (trans_a_ || !b || b->rank() != 2 || b->numel() > (int64_t{1} << 18) ||
        !avx512::have_avx512())
      return false;
    const int64_t N = trans_b_ ? b->dim(0) : b->dim(1), K = trans_b_ ? b->dim(1) : b->dim(0);
    const bool use_c = has_c && beta_ != 0.0f;
    if (use_c && (!c || c->dtype() != DType::kFloat32 || !row_like(*c, N))) return false;
    const float* bp = b->data<float>();
    const float* c_data = use_c ? c->data<float>() : nullptr;
    const int64_t c_n = use_c ? c->numel() : 0;
    small_ = std::make_unique<avx512::PackedMatrix>(
        avx512::pack_matrix_panels(bp, K, N, trans_b_, alpha_, c_data, c_n, beta_));
    if (use_c) fold_c(*c, N);
    return true;
  }

  // A constant B packed for oneDNN, alpha folded in, and a constant C of one value or one row
  // as beta * C in N bias values. True when B was packed: the kernel no longer reads B, nor a
  // folded C.
  // Not a B that recur's own loop took (pack_small): as MatMul's (matmul.cc, pack), for the
  // resident memory of small models.
  // `last_read` as MatMul's (matmul.cc).
  Result<bool> pack(const Tensor* b, const Tensor* c, bool has_c, bool last_read) {
    if (small_ || !b || b->rank() != 2 || b->dtype() != DType::kFloat32) return false;
    const int64_t N = trans_b_ ? b->dim(0) : b->dim(1), K = trans_b_ ? b->dim(1) : b->dim(0);
    const bool row_c = c && c->dtype() == DType::kFloat32 && row_like(*c, N);
    // Without AVX-512 (avx2_panels.h): A as it is, and C folded or none, as the loop adds only
    // a bias.
    if (avx2::wanted(K, N) && !trans_a_ && (!has_c || beta_ == 0.0f || row_c)) {
      panels_ =
          std::make_unique<avx2::PanelB>(avx2::pack(b->data<float>(), K, N, trans_b_, alpha_));
      if (has_c && beta_ != 0.0f) fold_c(*c, N);
      return true;
    }
    RECUR_ASSIGN_OR_RETURN(
        packed_, PackedB::make(b->data<float>(), K, N, trans_b_, alpha_, what_, last_read));
    if (!packed_) return false;
    if (has_c && beta_ != 0.0f && row_c) fold_c(*c, N);
    c_at_run_ = has_c && beta_ != 0.0f && !row_c;
    return true;
  }
  bool panels() const { return panels_ != nullptr; }
  bool small() const { return small_ != nullptr; }
  // Whether the loop's copy of B is the only one the kernel reads (the ONNX copy can go).
  bool holds_b() const { return small_ && small_->Kp > 0; }
  bool c_folded() const { return !bias_.empty(); }
  // Whether recur's own loop reads the B packed for oneDNN, for a few rows (PackedB).
  // Not with A transposed, nor a C added at run (the loop adds only a bias).
  bool loop_reads_packed() const {
    return own_loops_ && !trans_a_ && !c_at_run_ && packed_ && packed_->loop_reads();
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    const Tensor* c = c_folded() ? nullptr : ctx.input(2);
    if (!a || (!b && !packed_ && !small_ && !panels_))
      return ctx.error(ErrorCode::kInvalidArgument, "Gemm needs inputs A and B");
    for (const Tensor* t : {a, b, c}) {
      if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) {
        return ctx.error(ErrorCode::kNotImplemented, "the oneDNN Gemm runs float32 on the host");
      }
    }
    if (a->rank() != 2 || (b && b->rank() != 2)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "A and B must be 2-D, got " + shape_to_string(a->shape()) +
                           (b ? " and " + shape_to_string(b->shape()) : std::string()));
    }
    const int64_t M = trans_a_ ? a->dim(1) : a->dim(0), K = trans_a_ ? a->dim(0) : a->dim(1);
    const int64_t Kb = packed_    ? packed_->K()
                       : small_   ? small_->K
                       : panels_  ? panels_->K
                       : trans_b_ ? b->dim(1)
                                  : b->dim(0);
    const int64_t N = packed_    ? packed_->N()
                      : small_   ? small_->N
                      : panels_  ? panels_->N
                      : trans_b_ ? b->dim(0)
                                 : b->dim(1);
    if (K != Kb) {
      return ctx.error(
          ErrorCode::kInvalidArgument,
          "inner dimensions differ: " + std::to_string(K) + " and " + std::to_string(Kb));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, {M, N}));
    float* yp = y->data<float>();
    const PackedB* packed = packed_.get();
    if (panels_) {
      // Many rows: oneDNN's matmul over B unpacked once (avx2::kMaxRows).
      if (M > avx2::kMaxRows) {
        RECUR_ASSIGN_OR_RETURN(packed, late_.get(*panels_, what_));
      }
      if (!packed) {
        avx2::multiply(*panels_, a->data<float>(), M, c_folded() ? bias_.data() : nullptr, yp,
                       threads_);
        return ok_status();
      }
    }
    if (small_) {
      // Too large for the loop: oneDNN over the loop's copy of B (the loop where oneDNN has no
      // layout for it).
      if (static_cast<double>(M) * static_cast<double>(K * N) >= 4194304.0) {
        const float* plain = b ? b->data<float>() : nullptr;
        RECUR_ASSIGN_OR_RETURN(packed, late_.get(*small_, plain, trans_b_, alpha_, what_));
      }
      if (!packed) {
        ScratchPool::Lease scratch =
            scratch_.acquire(static_cast<size_t>(avx512::kRowBlock * small_->Np) * sizeof(float));
        avx512::multiply_matrix(*small_, a->data<float>(), M, yp,
                                static_cast<float*>(scratch.data()));
        return ok_status();
      }
    }
    const bool add_c = c && beta_ != 0.0f;
    if (add_c) RECUR_RETURN_IF_ERROR(fill_c(ctx, *c, M, N, yp));
    if (M * N == 0) return ok_status();
    if (K == 0) {
      if (!add_c) std::memset(yp, 0, y->nbytes());
      return ok_status();
    }
    const int64_t a_dims[] = {M, K}, y_dims[] = {M, N};
    const int64_t a_strides[] = {trans_a_ ? 1 : K, trans_a_ ? M : 1}, y_strides[] = {N, 1};
    const memory::desc ad = strided_desc(a_dims, a_strides);
    const memory::desc yd = strided_desc(y_dims, y_strides);
    if (packed) return run_packed(*packed, ad, a->raw_data(), yd, yp, M, add_c);
    const int64_t b_dims[] = {K, N};
    const int64_t b_strides[] = {trans_b_ ? 1 : N, trans_b_ ? K : 1};
    const memory::desc bd = strided_desc(b_dims, b_strides);
    RECUR_ASSIGN_OR_RETURN(auto prim, cache_.get(std::make_tuple(M, N, K, add_c), [&]() {
      dnnl::primitive_attr attr = attributes(add_c);
      if (alpha_ != 1.0f) attr.set_output_scales(0, {alpha_});
      auto d = [&] { return dnnl::matmul::desc(ad, bd, yd); };
      return make_primitive<dnnl::matmul>(d, attr, threads_for(work(M, N, K), threads_), what_);
    }));
    return execute_primitive(*prim,
                             {{DNNL_ARG_SRC, ad, a->raw_data()},
                              {DNNL_ARG_WEIGHTS, bd, b->raw_data()},
                              {DNNL_ARG_DST, yd, yp}},
                             scratch_, what_);
  }

 private:
  static double work(int64_t M, int64_t N, int64_t K) {
    return static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  }

  // The attributes of every primitive: beta * C, written into Y first, added by a sum post-op.
  static dnnl::primitive_attr attributes(bool add_c) {
    dnnl::primitive_attr attr = user_scratchpad_attr();
    if (add_c) {
      dnnl::post_ops po;
      po.append_sum(1.0f);
      attr.set_post_ops(po);
    }
    return attr;
  }

  // Y = beta * C, C broadcast (unidirectionally) from [], [N], [1,N], [M,1] or [M,N].
  Status fill_c(KernelContext& ctx, const Tensor& c, int64_t M, int64_t N, float* yp) const {
    Shape cs = c.shape();
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    if (cs.size() != 2 || (cs[0] != 1 && cs[0] != M) || (cs[1] != 1 && cs[1] != N)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "C of shape " + shape_to_string(c.shape()) + " does not broadcast to [" +
                           std::to_string(M) + "," + std::to_string(N) + "]");
    }
    const float* cp = c.data<float>();
    const int64_t sm = cs[0] == 1 ? 0 : cs[1], sn = cs[1] == 1 ? 0 : 1;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) yp[m * N + n] = beta_ * cp[m * sm + n * sn];
    return ok_status();
  }

  // beta * C (one value or a row of N) as N bias values.
  void fold_c(const Tensor& c, int64_t N) {
    bias_.resize(static_cast<size_t>(N));
    const float* cp = c.data<float>();
    for (int64_t n = 0; n < N; ++n)
      bias_[static_cast<size_t>(n)] = beta_ * cp[c.numel() == 1 ? 0 : n];
  }

  // The product on the packed B (alpha in it), the folded C as the bias.
  Status run_packed(const PackedB& packed, const memory::desc& ad, const void* a,
                    const memory::desc& yd, float* y, int64_t M, bool add_c) const {
    // A read in place, rows K apart: the plans by number of rows (packed_b.h, PackedPlans).
    if (!trans_a_) {
      if (!add_c && own_loops_ && packed.loop_takes(M)) {
        packed.multiply(static_cast<const float*>(a), M, c_folded() ? bias_.data() : nullptr, y,
                        threads_);
        return ok_status();
      }
      return packed_plans_.run(packed, M, static_cast<const float*>(a), y,
                               c_folded() ? bias_.data() : nullptr, attributes(add_c),
                               add_c ? 1 : 0, threads_, scratch_, what_);
    }
    const int64_t N = packed.N();
    const int64_t bias_dims[] = {1, N}, bias_strides[] = {N, 1};
    const memory::desc bias_d = strided_desc(bias_dims, bias_strides);
    RECUR_ASSIGN_OR_RETURN(auto plan, packed_cache_.get(std::make_tuple(M, add_c), [&] {
      return packed.plan(ad, yd, c_folded() ? &bias_d : nullptr, attributes(add_c),
                         threads_for(work(M, N, packed.K()), threads_), what_);
    }));
    return PackedB::execute(*plan, ad, a, yd, y, c_folded() ? &bias_d : nullptr, bias_.data(),
                            scratch_, what_);
  }

  bool own_loops_;         // onednn.impl auto: recur's own loops may run
  bool c_at_run_ = false;  // a C not folded into the bias, added at every run
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  Threads threads_;
  std::string what_;  // the node, for errors: described once, not on every run
  std::unique_ptr<avx512::PackedMatrix> small_;  // B (alpha, beta C) for recur's own loop
  std::shared_ptr<const PackedB> packed_;        // alpha B for oneDNN, when B is constant
  LatePackedB late_;                             // small_'s or panels_' B for oneDNN's matmul
  std::unique_ptr<avx2::PanelB> panels_;         // alpha B for recur's AVX2 loop
  std::vector<float> bias_;                      // beta C, when C folded into the bias
  mutable PrimCache<std::tuple<int64_t, int64_t, int64_t, bool>> cache_;
  mutable PrimCache<std::tuple<int64_t, bool>, PackedB::Plan> packed_cache_;  // transposed A
  PackedPlans packed_plans_;
  mutable ScratchPool scratch_;
};

}  // namespace

void register_gemm(KernelRegistry& r) {
  r.add({.op_type = "Gemm",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const bool ta = a.get_int("transA", 0) != 0, tb = a.get_int("transB", 0) != 0;
           const float alpha = a.get_float("alpha", 1.0f), beta = a.get_float("beta", 1.0f);
           RECUR_RETURN_IF_ERROR(a.status());
           const OnednnOptions& o = options_of(ctx);
           auto k =
               std::make_unique<GemmKernel>(ta, tb, alpha, beta, o.team(), ctx.node().describe(),
                                            !o.deterministic, o.small_cells);
           const Tensor* b = ctx.constant_input(1);
           const Tensor* c = ctx.constant_input(2);
           const bool has_c = ctx.node().has_input(2);
           if (o.small_cells && k->pack_small(b, c, has_c)) {
             ctx.note(k->holds_b()
                          ? "B packed at load in oneDNN's layout for recur's own loop (products "
                            "under 4M multiply-adds) and oneDNN's matmul, alpha and beta * C "
                            "folded in; ONNX copy of B released"
                          : "B packed at load for recur's own loop (products under 4M "
                            "multiply-adds), alpha and beta * C folded in");
             if (k->holds_b()) ctx.release_input_now(1);
             if (k->c_folded()) ctx.release_input_now(2);
           }
           RECUR_ASSIGN_OR_RETURN(const bool packed,
                                  k->pack(b, c, has_c, b && ctx.input_dies_on_release(1)));
           if (packed) {
             const bool folded = k->c_folded();
             const char* what = k->panels() ? "in panels for recur's AVX2 loop"
                                : k->loop_reads_packed()
                                    ? "for oneDNN's matmul (and recur's own loop, for a few rows)"
                                    : "for oneDNN's matmul";
             ctx.note(std::string("B packed at load ") + what +
                      (folded ? ", alpha and beta * C folded in; ONNX copies released"
                              : ", alpha folded in; ONNX copy released"));
             ctx.release_input_now(1);
             if (folded) ctx.release_input_now(2);
           }
           return std::unique_ptr<Kernel>(std::move(k));
         },
         .claim =
             [](const Node& n, const Graph& g) {
               // Before opset 7, C broadcasts only with broadcast=1; the kernel always
               // broadcasts, so the strict form stays with the reference.
               if (n.opset < 7) {
                 const Attribute* b = n.attr("broadcast");
                 if (!b || b->i == 0) {
                   return Claim::decline("Gemm before opset 7 without broadcast=1");
                 }
               }
               Claim c = claim_float32_input(n, g, 0);
               return c.yes ? claim_float32_input(n, g, 1) : c;
             }});
}

}  // namespace recur::onednn
