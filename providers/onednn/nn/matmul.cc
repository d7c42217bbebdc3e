// MatMul (numpy semantics: 1-D operands promoted, batch dimensions broadcast) through oneDNN's
// matmul primitive; a constant B is reordered once into the layout the primitive prefers (a
// [K, N] one at load, for every shape of A: packed_b.h; one of higher rank per shape). And
// recur::MatMulBias (runtime/graph/matmul_bias.h): the same with the primitive's bias and the
// activation as an eltwise post-op, so that neither takes a pass of its own.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <tuple>

#include "providers/onednn/common/avx2_panels.h"
#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/finite.h"
#include "providers/onednn/common/layout.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"
#include "providers/onednn/nn/packed_b.h"
#include "runtime/graph/matmul_bias.h"

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
  memory::desc bias;     // [1, ..., 1, N], a MatMulBias's
  CachedPrimitive prim;
  std::shared_ptr<AlignedBuffer> packed_b;  // B in that layout, when B is constant
};

// A MatMulBias's fused part: the bias (constant, N values) and the activation.
struct Epilogue {
  Tensor bias;             // undefined for a plain MatMul
  std::string activation;  // "", "Relu", "Gelu", "GeluTanh", "Silu"
};

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(Threads threads, Tensor constant_b, std::string what, bool small, Epilogue epilogue,
               bool chunk_rows)
      : own_loops_(small),
        threads_(threads),
        constant_b_(std::move(constant_b)),
        what_(std::move(what)),
        epilogue_(std::move(epilogue)),
        packed_plans_(chunk_rows) {
    // A small constant B also takes recur's own loop (avx512.h): below threads_for's bound a
    // oneDNN call costs more than the product, and its primitive a few MiB of code and JIT.
    // The loop adds the bias itself; the activation follows in a second pass over the rows.
    // B is packed in oneDNN's layout for it, which the loop reads too: products too large for
    // the loop read the same copy (late_), and the ONNX copy goes (create_matmul).
    // Before, a Conformer's feed-forward weights were held three times: the ONNX copy, the
    // loop's and oneDNN's (21.6 MiB each). Not where that layout would pad B much
    // (pack_matrix_panels): the loop keeps its own, and oneDNN packs the ONNX copy.
    if (small && constant_b_.defined() && constant_b_.rank() == 2 &&
        constant_b_.numel() <= kSmallMaxB && avx512::have_avx512()) {
      const int64_t K = constant_b_.dim(0), N = constant_b_.dim(1);
      const bool bias = epilogue_.bias.defined();
      const float* bias_data = bias ? epilogue_.bias.data<float>() : nullptr;
      const int64_t bias_n = bias ? epilogue_.bias.numel() : 0;
      const float* b = constant_b_.data<float>();
      small_ = std::make_unique<avx512::PackedMatrix>(
          avx512::pack_matrix_panels(b, K, N, false, 1.0f, bias_data, bias_n, 1.0f));
      if (holds_b()) constant_b_ = Tensor();
    }
  }

  // Whether B and the bias, both constants of a MatMulBias, are free of NaN and infinities;
  // asked before pack() or the constructor's packing drops the ONNX copy of B.
  static bool finite_constants(const Tensor& b, const Epilogue& e) {
    const auto finite = [](const Tensor& t) {
      return !t.defined() || all_finite(t.data<float>(), t.numel());
    };
    return finite(b) && finite(e.bias);
  }

  bool small() const { return small_ != nullptr; }
  bool panels() const { return panels_ != nullptr; }
  // Whether recur's own loop reads the B packed for oneDNN, for a few rows (PackedB).
  bool loop_reads_packed() const { return own_loops_ && packed_ && packed_->loop_reads(); }
  // Whether the loop's copy of B is the only one the kernel reads (the ONNX copy can go).
  bool holds_b() const { return small_ && small_->Kp > 0; }

  // A constant B [K, N] packed for oneDNN at load (packed_b.h). True when it was: the kernel
  // then no longer reads B, and keeps no reference to the graph's copy. Not a B small enough
  // for recur's own loop: packing it would map oneDNN's code and JIT buffers into the process
  // at load (2 MiB more resident for models/crnn) for the rare run with rows enough to leave
  // the loop, which packs it then (make_plan).
  // `last_read`: the ONNX copy dies when released, so packing may give its pages back as it
  // reads them (PackedB::make).
  Result<bool> pack(bool last_read) {
    if (small_ || !constant_b_.defined() || constant_b_.rank() != 2) return false;
    // Without AVX-512 (avx2_panels.h), but not under a SiLU or a Gelu, which oneDNN's post-op
    // computes faster than a second pass without AVX-512's vector erf and exp.
    if (avx2::wanted(constant_b_.dim(0), constant_b_.dim(1)) &&
        (epilogue_.activation.empty() || epilogue_.activation == "Relu")) {
      panels_ = std::make_unique<avx2::PanelB>(avx2::pack(
          constant_b_.data<float>(), constant_b_.dim(0), constant_b_.dim(1), false, 1.0f));
      constant_b_ = Tensor();
      return true;
    }
    RECUR_ASSIGN_OR_RETURN(
        packed_, PackedB::make(constant_b_.data<float>(), constant_b_.dim(0), constant_b_.dim(1),
                               false, 1.0f, what_, last_read));
    if (!packed_) return false;
    constant_b_ = Tensor();
    return true;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || (!b && !packed_ && !small_ && !panels_))
      return ctx.error(ErrorCode::kInvalidArgument, "MatMul needs inputs A and B");
    for (const Tensor* t : {a, b}) {
      if (!t) continue;
      if (t->dtype() != DType::kFloat32 || !t->is_cpu()) {
        return ctx.error(ErrorCode::kNotImplemented,
                         "the oneDNN MatMul runs float32 on the host, got " +
                             std::string(dtype_name(t->dtype())));
      }
      if (t->rank() == 0) return ctx.error(ErrorCode::kInvalidArgument, "MatMul of a scalar");
    }
    if (packed_) return run_packed(ctx, *packed_, *a);
    if (panels_) return run_panels(ctx, *a);
    if (small_) {
      if (a->dim(-1) != small_->K) return shapes_error(ctx, *a, small_->K, small_->N);
      const int64_t rows = rows_of(*a);
      if (static_cast<double>(rows) * static_cast<double>(small_->K * small_->N) < kSmallMaxMacs)
        return run_small(ctx, *a, rows);
      // Too large for the loop: oneDNN over the loop's copy of B (the loop where oneDNN has
      // no layout for it).
      const float* plain = constant_b_.defined() ? constant_b_.data<float>() : nullptr;
      RECUR_ASSIGN_OR_RETURN(const PackedB* late, late_.get(*small_, plain, false, 1.0f, what_));
      return late ? run_packed(ctx, *late, *a) : run_small(ctx, *a, rows);
    }
    // A 2-D B multiplies every row of A alike, whatever A's batch dimensions: A [..., M, K]
    // runs as one [rows, K] matrix. A batch of single rows ([T, 1, d] from a batch-first
    // attention's transpose at batch 1) was otherwise T products of one row each: a
    // conformer's attention projections took 0.8 ms against 0.3 so.
    Tensor flat;
    if (b->rank() == 2 && a->rank() > 2 && a->dim(-1) == b->dim(0)) {
      int64_t rows = 1;
      for (int64_t i = 0; i + 1 < a->rank(); ++i) rows *= a->dim(i);
      flat = a->reshaped({rows, a->dim(-1)});
    }
    const Tensor& a2 = flat.defined() ? flat : *a;
    const bool fused = fusable(*a);
    RECUR_ASSIGN_OR_RETURN(
        auto plan,
        (fused ? cache_ : unfused_cache_).get(std::make_tuple(a2.shape(), b->shape()), [&] {
          return make_plan(ctx, a2, *b, attributes(fused));
        }));
    Shape out = plan->out;
    if (flat.defined()) {
      out = a->shape();
      out.back() = b->dim(1);
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    if (plan->k == 0) {
      std::memset(y->raw_data(), 0, y->nbytes());
      return ok_status();
    }
    const void* bdata = plan->packed_b ? plan->packed_b->data : b->raw_data();
    const Bind args[] = {{DNNL_ARG_SRC, plan->a, a->raw_data()},
                         {DNNL_ARG_WEIGHTS, plan->b, bdata},
                         {DNNL_ARG_DST, plan->y, y->raw_data()},
                         {DNNL_ARG_BIAS, plan->bias, epilogue_.bias.raw_data()}};
    RECUR_RETURN_IF_ERROR(
        execute_primitive(plan->prim, std::span<const Bind>(args, epilogue_.bias.defined() ? 4 : 3),
                          scratch_, what_));
    if (!fused) apply_activation(y->data<float>(), y->numel());
    return ok_status();
  }

  void set_constants_finite(bool finite) { constants_finite_ = finite; }

 private:
  // Whether a product by oneDNN's primitive may take the activation as its post-op. oneDNN 2.6's
  // Relu post-op is max(x, 0), which gives 0 for a NaN: where A (or B or the bias) holds a NaN
  // or an infinity (inf - inf is NaN), the product runs without it and a Relu that keeps each
  // NaN follows, as the reference and ONNX Runtime (measured: MatMul, Add and Relu, which it
  // fuses too) keep it. One read of A a run; recur's own loop (run_small) needs none.
  bool fusable(const Tensor& a) const {
    return epilogue_.activation != "Relu" ||
           (constants_finite_ &&
            (a.dtype() != DType::kFloat32 || all_finite(a.data<float>(), a.numel())));
  }

  Result<MatMulPlan> make_plan(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                               const dnnl::primitive_attr& attr) const {
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
    const Threads threads =
        threads_for(static_cast<double>(numel) * static_cast<double>(K), threads_);
    if (epilogue_.bias.defined()) {
      Shape bias_dims(r, 1);
      bias_dims[r - 1] = N;
      plan.bias = dense_desc(bias_dims);
    }
    auto make = [&](const memory::desc& bd) {
      return make_primitive<dnnl::matmul>(
          [&] {
            return epilogue_.bias.defined() ? dnnl::matmul::desc(plan.a, bd, plan.bias, plan.y)
                                            : dnnl::matmul::desc(plan.a, bd, plan.y);
          },
          attr, threads, what_);
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

  // Every primitive's attributes: a user scratchpad, and where `fused` a MatMulBias's
  // activation as a post-op.
  dnnl::primitive_attr attributes(bool fused = true) const {
    dnnl::primitive_attr attr = user_scratchpad_attr();
    if (fused && !epilogue_.activation.empty()) {
      dnnl::post_ops ops;
      // Swish's alpha, 1 for SiLU; the others take none.
      const float alpha = epilogue_.activation == "Silu" ? 1.0f : 0.0f;
      ops.append_eltwise(1.0f, activation_algorithm(epilogue_.activation), alpha, 0.0f);
      attr.set_post_ops(ops);
    }
    return attr;
  }

  // A [..., K] by the B packed at load, as [rows, K] by [K, N]: A's leading dimensions are
  // rows of one product whatever its rank, and one packed B serves them all.
  Status run_packed(KernelContext& ctx, const PackedB& packed, const Tensor& a) const {
    const int64_t K = packed.K(), N = packed.N();
    if (a.dim(-1) != K) return shapes_error(ctx, a, K, N);
    const int64_t rows = rows_of(a);
    if (small_ && static_cast<double>(rows) * static_cast<double>(K * N) < kSmallMaxMacs)
      return run_small(ctx, a, rows);
    Shape out = a.shape();
    out.back() = N;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    if (own_loops_ && packed.loop_takes(rows)) {
      packed.multiply(a.data<float>(), rows,
                      epilogue_.bias.defined() ? epilogue_.bias.data<float>() : nullptr,
                      y->data<float>(), threads_);
      apply_activation(y->data<float>(), y->numel());
      return ok_status();
    }
    const bool fused = fusable(a);
    // Variant 1: the plans without the activation.
    RECUR_RETURN_IF_ERROR(
        packed_plans_.run(packed, rows, a.data<float>(), y->data<float>(),
                          epilogue_.bias.defined() ? epilogue_.bias.data<float>() : nullptr,
                          attributes(fused), fused ? 0 : 1, threads_, scratch_, what_));
    if (!fused) apply_activation(y->data<float>(), y->numel());
    return ok_status();
  }

  // The rows of A [..., K]: the product of its leading dimensions (1 for a vector), which
  // numel / K is not where K is 0.
  static int64_t rows_of(const Tensor& a) {
    int64_t rows = 1;
    for (int64_t i = 0; i + 1 < a.rank(); ++i) rows *= a.dim(i);
    return rows;
  }

  static Status shapes_error(KernelContext& ctx, const Tensor& a, int64_t K, int64_t N) {
    return ctx.error(ErrorCode::kInvalidArgument, "shapes " + shape_to_string(a.shape()) +
                                                      " and [" + std::to_string(K) + "," +
                                                      std::to_string(N) + "] do not multiply");
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
    apply_activation(y->data<float>(), y->numel());
    return ok_status();
  }

  // A [..., K] by the panels into [..., N], the bias added in the loop and a Relu after it.
  Status run_panels(KernelContext& ctx, const Tensor& a) const {
    const int64_t K = panels_->K, N = panels_->N;
    if (a.dim(-1) != K) return shapes_error(ctx, a, K, N);
    const int64_t rows = rows_of(a);
    if (rows > avx2::kMaxRows) {
      RECUR_ASSIGN_OR_RETURN(const PackedB* late, late_.get(*panels_, what_));
      if (late) return run_packed(ctx, *late, a);
    }
    Shape out = a.shape();
    out.back() = N;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    avx2::multiply(*panels_, a.data<float>(), rows,
                   epilogue_.bias.defined() ? epilogue_.bias.data<float>() : nullptr,
                   y->data<float>(), threads_);
    apply_activation(y->data<float>(), y->numel());
    return ok_status();
  }

  static dnnl::algorithm activation_algorithm(const std::string& act) {
    if (act == "Relu") return dnnl::algorithm::eltwise_relu;
    if (act == "Silu") return dnnl::algorithm::eltwise_swish;
    if (act == "GeluTanh") return dnnl::algorithm::eltwise_gelu_tanh;
    return dnnl::algorithm::eltwise_gelu_erf;
  }

  // The activation of the small loop's output: Relu in place; SiLU and the Gelus through
  // avx512.h's sigmoid, erf or tanh, a block of 1024 values at a time (no allocation on this
  // path).
  void apply_activation(float* y, int64_t n) const {
    const std::string& act = epilogue_.activation;
    if (act.empty()) return;
    if (act == "Relu") {
      relu_keeping_nan(y, n);
      return;
    }
    const bool tanh_form = act == "GeluTanh";
    constexpr int64_t kBlock = 1024;
    alignas(64) float t[kBlock];
    for (int64_t at = 0; at < n; at += kBlock) {
      const int64_t m = std::min(kBlock, n - at);
      float* x = y + at;
      if (act == "Silu") {
        avx512::unary(avx512::Unary::kSigmoid, x, m, t);
        for (int64_t i = 0; i < m; ++i) x[i] *= t[i];
        continue;
      }
      if (tanh_form) {
        const float k = 0.7978845608028654f;  // sqrt(2 / pi)
        for (int64_t i = 0; i < m; ++i) t[i] = k * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
        avx512::unary(avx512::Unary::kTanh, t, m, t);
      } else {
        for (int64_t i = 0; i < m; ++i) t[i] = x[i] * 0.7071067811865476f;
        avx512::unary(avx512::Unary::kErf, t, m, t);
      }
      for (int64_t i = 0; i < m; ++i) x[i] = 0.5f * x[i] * (1.0f + t[i]);
    }
  }

  static constexpr int64_t kSmallMaxB = int64_t{1} << 18;  // 1 MiB of B
  static constexpr double kSmallMaxMacs = 4194304.0;       // threads_for's one-thread bound

  bool own_loops_;  // onednn.impl auto: recur's own loops may run
  Threads threads_;
  // B when it is a constant of the graph (at compile) of rank above 2, reordered once per
  // shape plan; one of rank 2 is packed_ instead.
  Tensor constant_b_;
  std::shared_ptr<const PackedB> packed_;
  std::unique_ptr<avx512::PackedMatrix> small_;  // B for recur's own loop, when small
  std::unique_ptr<avx2::PanelB> panels_;         // B for recur's AVX2 loop
  std::string what_;                             // the node, for errors
  Epilogue epilogue_;
  mutable PrimCache<std::tuple<Shape, Shape>, MatMulPlan> cache_;
  mutable PrimCache<std::tuple<Shape, Shape>, MatMulPlan> unfused_cache_;  // without the Relu
  bool constants_finite_ = true;  // B and the bias (finite_constants)
  PackedPlans packed_plans_;
  LatePackedB late_;  // small_'s or panels_' B for oneDNN's matmul
  mutable ScratchPool scratch_;
};

Result<std::unique_ptr<Kernel>> create_matmul(CompileContext& ctx) {
  const Tensor* b = ctx.constant_input(1);
  // Asked before the kernel takes a reference of its own to B, which pack() drops.
  const bool b_dies = ctx.input_dies_on_release(1);
  Tensor constant_b = b && b->dtype() == DType::kFloat32 && b->is_cpu() ? *b : Tensor();
  Epilogue epilogue;
  if (ctx.node().op_type == kMatMulBiasOp) {
    const Tensor* bias = ctx.constant_input(2);
    if (!bias || bias->dtype() != DType::kFloat32 || !bias->is_cpu() || !constant_b.defined() ||
        constant_b.rank() != 2 || bias->numel() != constant_b.dim(1)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "a MatMulBias takes a constant float32 B [K, N] and N bias values");
    }
    epilogue.bias = *bias;
    AttrReader a(ctx.node());
    epilogue.activation = a.get_string(kMatMulBiasActivation, "");
    RECUR_RETURN_IF_ERROR(a.status());
    if (!known_matmul_bias_activation(epilogue.activation)) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "activation '" + epilogue.activation + "' is not a MatMulBias's");
    }
  }
  const bool finite = MatMulKernel::finite_constants(constant_b, epilogue);
  auto k = std::make_unique<MatMulKernel>(options_of(ctx).team(), std::move(constant_b),
                                          ctx.node().describe(), options_of(ctx).small_cells,
                                          std::move(epilogue), !options_of(ctx).deterministic);
  k->set_constants_finite(finite);
  if (k->holds_b()) {
    ctx.note(
        "B packed at load in oneDNN's layout for recur's own loop (products under 4M "
        "multiply-adds) and oneDNN's matmul; ONNX copy released");
    ctx.release_input_now(1);
  } else if (k->small()) {
    ctx.note("B packed at load for recur's own loop (products under 4M multiply-adds)");
  }
  RECUR_ASSIGN_OR_RETURN(const bool packed, k->pack(b_dies));
  if (packed) {
    ctx.note(k->panels() ? "B packed at load in panels for recur's AVX2 loop; ONNX copy "
                           "released"
             : k->loop_reads_packed()
                 ? "B packed at load for oneDNN's matmul (and recur's own loop, "
                   "for a few rows); ONNX copy released"
                 : "B packed at load for oneDNN's matmul; ONNX copy released");
    ctx.release_input_now(1);
  }
  return std::unique_ptr<Kernel>(std::move(k));
}

Claim claim_matmul(const Node& n, const Graph& g) {
  Claim c = claim_float32_input(n, g, 0);
  return c.yes ? claim_float32_input(n, g, 1) : c;
}

}  // namespace

void register_matmul(KernelRegistry& r) {
  r.add({.op_type = "MatMul", .since = 1, .create = create_matmul, .claim = claim_matmul});
  r.add({.op_type = kMatMulBiasOp,
         .domain = kMatMulBiasDomain,
         .since = 1,
         .create = create_matmul,
         .claim = [](const Node& n, const Graph& g) {
           Claim c = claim_matmul(n, g);
           if (!c.yes) return c;
           const Tensor* bias = n.inputs.size() > 2 ? g.constant(n.inputs[2]) : nullptr;
           if (!bias || bias->dtype() != DType::kFloat32)
             return Claim::decline("the bias is not a float32 constant");
           return c;
         }});
}

}  // namespace recur::onednn
