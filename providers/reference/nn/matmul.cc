// MatMul (opsets 1, 9, 13): numpy matmul, with 1-D promotion and batch broadcasting; and
// recur::MatMulBias (runtime/graph/matmul_bias.h), the same with a bias and an activation.
#include <cmath>
#include <string>
#include <utility>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/gemm.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"
#include "runtime/graph/matmul_bias.h"

namespace recur::reference {

Result<MatMulShapes> matmul_shapes(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) {
    return invalid_argument("MatMul inputs must have rank >= 1, got " + shape_to_string(a) +
                            " and " + shape_to_string(b));
  }
  MatMulShapes s;
  Shape a2 = a, b2 = b;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  s.m = a2[a2.size() - 2];
  s.k = a2.back();
  s.n = b2.back();
  if (b2[b2.size() - 2] != s.k) {
    return invalid_argument("inner dimensions do not match: A " + shape_to_string(a) + ", B " +
                            shape_to_string(b));
  }
  s.a_batch.assign(a2.begin(), a2.end() - 2);
  s.b_batch.assign(b2.begin(), b2.end() - 2);
  RECUR_ASSIGN_OR_RETURN(s.batch, broadcast_shapes({s.a_batch, s.b_batch}));
  s.y = s.batch;
  if (a.size() > 1) s.y.push_back(s.m);
  if (b.size() > 1) s.y.push_back(s.n);
  RECUR_RETURN_IF_ERROR(checked_numel(s.y, "the output shape").status());
  return s;
}

Status infer_matmul_like(InferContext& ctx, DType out_dtype, size_t a_index, size_t b_index) {
  const TypeInfo& a = ctx.input_type(a_index);
  const TypeInfo& b = ctx.input_type(b_index);
  TypeInfo out;
  out.dtype = out_dtype;
  if (a.has_rank() && b.has_rank() && a.rank() >= 1 && b.rank() >= 1) {
    std::vector<Dim> ad = *a.shape, bd = *b.shape;
    const bool a1 = ad.size() == 1, b1 = bd.size() == 1;
    if (a1) ad.insert(ad.begin(), Dim{1, {}});
    if (b1) bd.push_back(Dim{1, {}});
    const Dim k1 = ad.back(), k2 = bd[bd.size() - 2];
    if (k1.is_fixed() && k2.is_fixed() && k1.value != k2.value) {
      return ctx.error("inner dimensions do not match: " + a.to_string() + " and " + b.to_string());
    }
    auto batch = broadcast_dims(std::vector<Dim>(ad.begin(), ad.end() - 2),
                                std::vector<Dim>(bd.begin(), bd.end() - 2));
    if (!batch.ok()) return ctx.error(batch.status().message());
    if (batch->has_value()) {
      std::vector<Dim> dims = **batch;
      if (!a1) dims.push_back(ad[ad.size() - 2]);
      if (!b1) dims.push_back(bd.back());
      out.shape = dims;
    }
  }
  ctx.set_output(0, out);
  return ok_status();
}

namespace {

constexpr TypeList<int32_t, int64_t, uint32_t, uint64_t> kMatMulIntTypes{};

class MatMulKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    if (a->dtype() != b->dtype()) {
      return invalid_argument("A and B have different dtypes " + dtype_str(a->dtype()) + " and " +
                              dtype_str(b->dtype()));
    }
    RECUR_ASSIGN_OR_RETURN(MatMulShapes s, matmul_shapes(a->shape(), b->shape()));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a->dtype(), s.y));
    const int64_t mk = s.m * s.k, kn = s.k * s.n, mn = s.m * s.n;
    bool handled = visit_dtype(kNnFloatTypes, a->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      ComputeView<T> av(*a), bv(*b);
      ComputeOut<T> yv(*y);
      for_each_broadcast<2>(
          s.batch, {&s.a_batch, &s.b_batch}, [&](int64_t i, const std::array<int64_t, 2>& off) {
            gemm<C>(false, false, s.m, s.n, s.k, C(1), av.data() + off[0] * mk, s.k,
                    bv.data() + off[1] * kn, s.n, C(0), yv.data() + i * mn, s.n);
          });
      yv.flush();
    });
    if (!handled) {
      handled = visit_dtype(kMatMulIntTypes, a->dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* ap = a->data<T>();
        const T* bp = b->data<T>();
        T* yp = y->data<T>();
        for_each_broadcast<2>(
            s.batch, {&s.a_batch, &s.b_batch}, [&](int64_t i, const std::array<int64_t, 2>& off) {
              matmul_int_wrapping<T>(false, false, s.m, s.n, s.k, ap + off[0] * mk,
                                     bp + off[1] * kn, yp + i * mn);
            });
      });
    }
    if (!handled) return not_implemented("dtype " + dtype_str(a->dtype()) + " is not supported");
    return ok_status();
  }
};

// recur::MatMulBias (runtime/graph/matmul_bias.h): the MatMul of float A by B, then the bias
// added along the last axis and the activation applied in the compute type, each as the
// unfused node computes it.
class MatMulBiasKernel final : public Kernel {
 public:
  explicit MatMulBiasKernel(std::string activation) : activation_(std::move(activation)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* bias, required_input(ctx, 2));
    if (a->dtype() != DType::kFloat32 || b->dtype() != DType::kFloat32 ||
        bias->dtype() != DType::kFloat32) {
      return invalid_argument("a MatMulBias takes float32 A, B and bias");
    }
    RECUR_ASSIGN_OR_RETURN(MatMulShapes s, matmul_shapes(a->shape(), b->shape()));
    if (bias->numel() != s.n) {
      return invalid_argument("the bias has " + std::to_string(bias->numel()) +
                              " values; the product has " + std::to_string(s.n) + " columns");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, s.y));
    const int64_t mk = s.m * s.k, kn = s.k * s.n, mn = s.m * s.n;
    const float* ap = a->data<float>();
    const float* bp = b->data<float>();
    const float* bias_p = bias->data<float>();
    float* yp = y->data<float>();
    for_each_broadcast<2>(s.batch, {&s.a_batch, &s.b_batch},
                          [&](int64_t i, const std::array<int64_t, 2>& off) {
                            gemm<float>(false, false, s.m, s.n, s.k, 1.0f, ap + off[0] * mk, s.k,
                                        bp + off[1] * kn, s.n, 0.0f, yp + i * mn, s.n);
                          });
    const int64_t rows = s.n == 0 ? 0 : y->numel() / s.n;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = yp + r * s.n;
      for (int64_t j = 0; j < s.n; ++j) row[j] = activate(row[j] + bias_p[j]);
    }
    return ok_status();
  }

 private:
  // The Relu, Swish-24 (alpha 1) and Gelu-20 of the reference's activations (activation.cc),
  // in float.
  float activate(float x) const {
    if (activation_.empty()) return x;
    if (activation_ == "Relu") return x < 0.0f ? 0.0f : x;  // NaN stays NaN, as in Relu
    if (activation_ == "Silu") return x / (1.0f + std::exp(-x));
    if (activation_ == "GeluTanh") {
      const float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
  }

  std::string activation_;
};

}  // namespace

void register_matmul(Registrar& r) {
  r.add({.op_type = "MatMul", .since = 1, .create = make_simple<MatMulKernel>()},
        [](InferContext& ctx) { return infer_matmul_like(ctx, ctx.input_type(0).dtype, 0, 1); });
  r.add({.op_type = kMatMulBiasOp,
         .domain = kMatMulBiasDomain,
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           std::string act = a.get_string(kMatMulBiasActivation, "");
           RECUR_RETURN_IF_ERROR(a.status());
           if (!known_matmul_bias_activation(act)) {
             return invalid_model(ctx.node().describe() + ": activation '" + act +
                                  "'; a MatMulBias takes Relu, Gelu or GeluTanh");
           }
           return std::unique_ptr<Kernel>(new MatMulBiasKernel(std::move(act)));
         }},
        [](InferContext& ctx) { return infer_matmul_like(ctx, DType::kFloat32, 0, 1); });
}

}  // namespace recur::reference
