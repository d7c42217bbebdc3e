// Elementwise activations through oneDNN's eltwise primitive: Relu, LeakyRelu, Tanh, Sigmoid,
// Exp, Log, Abs, Sqrt, Neg, Elu, Softplus, Clip, Round, HardSwish, Mish, Gelu and Swish; some of
// them on recur's own loops instead (small_form at any size, scalar_form on a few values).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"

namespace recur::onednn {

namespace {

using dnnl::algorithm;

// Inputs where oneDNN 2.6's eltwise gives another value than ONNX (and the reference, which
// follows numpy in double): its max/min-based forms and its exp map a NaN to a number (exp(NaN)
// was +inf), and its log of a subnormal is off by up to 4.1 (log(1e-40) gave -88.02, not
// -92.10: the approximation reads the exponent field as if normal).
enum class Fixup {
  kNone,
  kNan,           // NaN put back where X has one
  kSubnormalLog,  // std::log where X is subnormal
  kNanZero,       // NaN and zeros put back where X has them: f(-0) = -0, where the
                  // primitive gives +0 (numpy and the reference: -0)
};

struct EltwiseOp {
  const char* name;
  int since;
  algorithm alg;
  float alpha;  // fixed alpha, or the default of the attribute named `alpha_attr`
  float beta;
  const char* alpha_attr;
  // What a second pass over X mends after oneDNN's primitive (Fixup).
  Fixup fixup = Fixup::kNone;
};

constexpr EltwiseOp kOps[] = {
    {"Relu", 1, algorithm::eltwise_relu, 0.0f, 0.0f, nullptr, Fixup::kNanZero},
    {"LeakyRelu", 1, algorithm::eltwise_relu, 0.01f, 0.0f, "alpha", Fixup::kNanZero},
    {"Tanh", 1, algorithm::eltwise_tanh, 0.0f, 0.0f, nullptr},
    {"Sigmoid", 1, algorithm::eltwise_logistic, 0.0f, 0.0f, nullptr},
    {"Exp", 1, algorithm::eltwise_exp, 0.0f, 0.0f, nullptr, Fixup::kNan},
    {"Log", 1, algorithm::eltwise_log, 0.0f, 0.0f, nullptr, Fixup::kSubnormalLog},
    {"Abs", 1, algorithm::eltwise_abs, 0.0f, 0.0f, nullptr},
    {"Sqrt", 1, algorithm::eltwise_sqrt, 0.0f, 0.0f, nullptr},
    // beta -0: -x + -0 gives -0 for +0, where + 0 would give +0 (numpy: -0).
    {"Neg", 1, algorithm::eltwise_linear, -1.0f, -0.0f, nullptr},
    {"Elu", 1, algorithm::eltwise_elu, 1.0f, 0.0f, "alpha", Fixup::kNanZero},
    {"Softplus", 1, algorithm::eltwise_soft_relu, 0.0f, 0.0f, nullptr},
    {"Round", 11, algorithm::eltwise_round, 0.0f, 0.0f, nullptr},
    {"Clip", 1, algorithm::eltwise_clip, 0.0f, 0.0f, nullptr, Fixup::kNan},
    {"HardSwish", 14, algorithm::eltwise_hardswish, 0.0f, 0.0f, nullptr, Fixup::kNanZero},
    {"Mish", 18, algorithm::eltwise_mish, 0.0f, 0.0f, nullptr},
    {"Gelu", 20, algorithm::eltwise_gelu_erf, 0.0f, 0.0f, nullptr, Fixup::kNanZero},
    {"Swish", 24, algorithm::eltwise_swish, 1.0f, 0.0f, "alpha"},
};

// Gelu with approximate="tanh".
constexpr EltwiseOp kGeluTanh = {
    "Gelu", 20, algorithm::eltwise_gelu_tanh, 0.0f, 0.0f, nullptr, Fixup::kNanZero};

// The ops recur runs on its own loop (avx512.h), at any size: for small tensors a oneDNN call
// costs more than the work; HardSwish took oneDNN's primitive a second pass to put NaNs back
// ([1, 240, 4, 160]: 63 against 15 us), Tanh of [64, 200, 128] (a Tacotron's attention at
// batch 64) took it 0.78 ms on the one thread threads_for gives 1.6M elements, and Clip (a
// DeepSpeech2's Hardtanh) a second pass to put NaNs back. Neg and Abs flip or clear a sign bit,
// where a call of the primitive on a small tensor cost 2 us (a chain of 20,000 Negs of 4
// values: 46 ms a run against 2.2 on the reference provider).
std::optional<avx512::Unary> small_form(const EltwiseOp& op, float alpha) {
  const std::string_view name = op.name;
  if (name == "Neg") return avx512::Unary::kNeg;
  if (name == "Abs") return avx512::Unary::kAbs;
  if (name == "HardSwish") return avx512::Unary::kHardSwish;
  if (name == "Relu" && alpha == 0.0f) return avx512::Unary::kRelu;
  if (name == "LeakyRelu") return avx512::Unary::kLeakyRelu;
  if (name == "Tanh") return avx512::Unary::kTanh;
  if (name == "Sigmoid") return avx512::Unary::kSigmoid;
  if (name == "Sqrt") return avx512::Unary::kSqrt;
  if (name == "Clip") return avx512::Unary::kClip;
  return std::nullopt;
}

// Exp and Log of a few values on the C library's functions, as the reference computes them: a
// call of the primitive and its second pass over X cost about 2 us, more than 256 calls of
// these. (A duration predictor's Exp of [1, T] log-durations is such a node.)
inline constexpr int64_t kScalarMax = 256;
using ScalarFn = float (*)(float);
ScalarFn scalar_form(const EltwiseOp& op) {
  const std::string_view name = op.name;
  if (name == "Exp") return [](float x) { return std::exp(x); };
  if (name == "Log") return [](float x) { return std::log(x); };
  return nullptr;
}

class EltwiseKernel final : public Kernel {
 public:
  EltwiseKernel(const EltwiseOp& op, float alpha, float beta, Threads threads, std::string what,
                bool small)
      : op_(op),
        alpha_(alpha),
        beta_(beta),
        threads_(threads),
        what_(std::move(what)),
        small_(small && avx512::have_avx512() ? small_form(op, alpha) : std::nullopt),
        scalar_(small ? scalar_form(op) : nullptr) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "input 0 is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "the oneDNN kernel runs float32 on the host, "
                       "input is " +
                           std::string(dtype_name(x->dtype())));
    }
    float alpha = alpha_, beta = beta_;
    if (std::string_view(op_.name) == "Clip" && ctx.node().opset >= 11) {
      for (size_t i : {size_t{1}, size_t{2}}) {
        const Tensor* b = ctx.input(i);
        if (!b) continue;
        if (b->dtype() != DType::kFloat32 || b->numel() != 1) {
          return ctx.error(ErrorCode::kInvalidArgument,
                           std::string(i == 1 ? "min" : "max") + " must be a float32 scalar");
        }
        (i == 1 ? alpha : beta) = *b->data<float>();
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    if (x->numel() == 0) return ok_status();
    const float* xp = x->data<float>();
    float* yp = y->data<float>();
    const int64_t n = x->numel();
    if (op_.alg == algorithm::eltwise_clip && !(alpha <= beta)) {
      // numpy's clip, which the reference follows: a NaN bound makes every value NaN and
      // min > max makes every value max. oneDNN's clip takes neither.
      const float fill =
          std::isnan(alpha) || std::isnan(beta) ? std::numeric_limits<float>::quiet_NaN() : beta;
      for (int64_t i = 0; i < n; ++i) yp[i] = std::isnan(xp[i]) ? xp[i] : fill;
      return ok_status();
    }
    if (small_) {
      // Past threads_for's bound (an element here costs several multiply-adds' time) split
      // among the threads a lease gives, each part computed as a whole would be.
      const Threads want = threads_for(8.0 * static_cast<double>(n), threads_);
      CoreLease lease;
      if (want.max > 1) lease.acquire(want.max, want.shrink);
      const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), (n + 4095) / 4096);
      in_parts(n, jobs, [&](int64_t b, int64_t e) {
        avx512::unary(*small_, xp + b, e - b, yp + b, alpha, beta);
      });
      return ok_status();
    }
    if (scalar_ && n <= kScalarMax) {
      for (int64_t i = 0; i < n; ++i) yp[i] = scalar_(xp[i]);
      return ok_status();
    }
    const auto key = std::make_tuple(x->shape(), alpha, beta);
    RECUR_ASSIGN_OR_RETURN(auto prim, cache_.get(key, [&]() -> Result<CachedPrimitive> {
      const auto md = dense_desc(x->shape());
      auto d = [&] {
        return dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, op_.alg, md, alpha,
                                           beta);
      };
      return make_primitive<dnnl::eltwise_forward>(
          d, user_scratchpad_attr(), threads_for(static_cast<double>(x->numel()), threads_), what_);
    }));
    const auto md = dense_desc(x->shape());
    RECUR_RETURN_IF_ERROR(execute_primitive(
        *prim, {{DNNL_ARG_SRC, md, x->raw_data()}, {DNNL_ARG_DST, md, y->raw_data()}}, scratch_,
        what_));
    if (op_.fixup == Fixup::kNan) {
      for (int64_t i = 0; i < n; ++i)
        if (std::isnan(xp[i])) yp[i] = xp[i];
    } else if (op_.fixup == Fixup::kSubnormalLog) {
      for (int64_t i = 0; i < n; ++i)
        if (xp[i] > 0.0f && xp[i] < FLT_MIN) yp[i] = std::log(xp[i]);
    } else if (op_.fixup == Fixup::kNanZero) {
      for (int64_t i = 0; i < n; ++i)
        if (std::isnan(xp[i]) || xp[i] == 0.0f) yp[i] = xp[i];
    }
    return ok_status();
  }
  // Element by element, but not where oneDNN's primitive runs and a second pass reads X.
  uint32_t overwritable_inputs() const override {
    return op_.fixup != Fixup::kNone && !small_ ? 0 : 1;
  }

 private:
  const EltwiseOp& op_;
  float alpha_, beta_;
  Threads threads_;
  std::string what_;  // the node, for errors: described once, not on every run
  std::optional<avx512::Unary> small_;
  ScalarFn scalar_;  // at most kScalarMax values
  mutable PrimCache<std::tuple<Shape, float, float>> cache_;
  mutable ScratchPool scratch_;
};

Result<std::unique_ptr<Kernel>> create_eltwise(const EltwiseOp& given, CompileContext& ctx) {
  AttrReader a(ctx.node());
  const bool tanh_gelu =
      std::string_view(given.name) == "Gelu" && a.get_string("approximate", "none") == "tanh";
  const EltwiseOp& op = tanh_gelu ? kGeluTanh : given;
  float alpha = op.alpha_attr ? a.get_float(op.alpha_attr, op.alpha) : op.alpha;
  float beta = op.beta;
  if (std::string_view(op.name) == "Clip") {
    // An absent bound clips nothing, infinities included, as the reference (and numpy's clip
    // with None) has it: float's largest for an absent max turned +inf into 3.4e38.
    alpha = -std::numeric_limits<float>::infinity();
    beta = std::numeric_limits<float>::infinity();
    if (ctx.opset() < 11) {
      alpha = a.get_float("min", alpha);
      beta = a.get_float("max", beta);
    }
  }
  RECUR_RETURN_IF_ERROR(a.status());
  return std::unique_ptr<Kernel>(std::make_unique<EltwiseKernel>(
      op, alpha, beta, options_of(ctx).team(), ctx.node().describe(), options_of(ctx).small_cells));
}

}  // namespace

void register_math_kernels(KernelRegistry& r) {
  for (const EltwiseOp& op : kOps) {
    r.add({.op_type = op.name,
           .since = op.since,
           .create = [&op](CompileContext& ctx) { return create_eltwise(op, ctx); },
           .claim = [](const Node& n, const Graph& g) { return claim_float32_input(n, g); }});
  }
  register_erf(r);
  register_sin(r);
  register_cos(r);
  register_hard_sigmoid(r);
  register_binary(r);
}

}  // namespace recur::onednn
