// BatchNormalization in inference (the given mean and variance), X as [N, C, spatial]: below a
// few million elements as one multiply-add per element on AVX-512 (y = a[c] x + b[c], a and b
// folded at load from constant statistics), above through oneDNN's batch normalization with
// global statistics. Training mode, its extra outputs, and per-activation statistics
// (spatial=0 before opset 9) go to the reference provider at load.
#include <cmath>
#include <tuple>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

namespace {

// a = scale / sqrt(var + eps) and b = B - mean * a for channels [0, c), in `a` and `b`.
void fold_statistics(const float* scale, const float* bias, const float* mean, const float* var,
                     float epsilon, int64_t c, float* a, float* b) {
  for (int64_t i = 0; i < c; ++i) {
    a[i] = scale[i] / std::sqrt(var[i] + epsilon);
    b[i] = bias[i] - mean[i] * a[i];
  }
}

// oneDNN's ncsp batch normalization took 23 us for [2, 64, 8, 20] (a CRNN's, 1 thread), where
// this loop takes about 2: per channel a run of `s` contiguous elements, or, where the runs are
// shorter than a vector ([N, C] after a Linear layer), the channels across the vector.
RECUR_AVX512 void affine_channels(const float* x, int64_t n, int64_t c, int64_t s, const float* a,
                                  const float* b, float* y) {
  using avx512::kLanes;
  using avx512::lanes;
  if (s == 1) {
    for (int64_t i = 0; i < n; ++i, x += c, y += c) {
      for (int64_t k = 0; k < c; k += kLanes) {
        const __mmask16 m = lanes(c - k);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + k);
        _mm512_mask_storeu_ps(
            y + k, m,
            _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, a + k), _mm512_maskz_loadu_ps(m, b + k)));
      }
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch, x += s, y += s) {
      const __m512 va = _mm512_set1_ps(a[ch]), vb = _mm512_set1_ps(b[ch]);
      int64_t k = 0;
      for (; k + kLanes <= s; k += kLanes)
        _mm512_storeu_ps(y + k, _mm512_fmadd_ps(_mm512_loadu_ps(x + k), va, vb));
      if (k < s) {
        const __mmask16 m = lanes(s - k);
        _mm512_mask_storeu_ps(y + k, m, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + k), va, vb));
      }
    }
  }
}

class BatchNormKernel final : public Kernel {
 public:
  // `folded`: a and b, 2C values, where the statistics are constants (else empty).
  BatchNormKernel(float epsilon, Threads threads, std::string what, std::vector<float> folded)
      : epsilon_(epsilon),
        threads_(threads),
        what_(std::move(what)),
        folded_(std::move(folded)),
        small_(avx512::have_avx512()) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* in[5];
    for (size_t i = 0; i < 5; ++i) {
      in[i] = ctx.input(i);
      if (!in[i]) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "BatchNormalization needs X, scale, B, mean and var");
      }
      if (in[i]->dtype() != DType::kFloat32 || !in[i]->is_cpu()) {
        return ctx.error(ErrorCode::kNotImplemented,
                         "the oneDNN BatchNormalization runs float32 on the host");
      }
    }
    const Tensor& x = *in[0];
    if (x.rank() < 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must have rank >= 2 ([N, C, ...]), got " + shape_to_string(x.shape()));
    }
    const int64_t n = x.dim(0), c = x.dim(1);
    static const char* const kNames[] = {"scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; ++i) {
      if (in[i]->numel() != c) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         std::string(kNames[i - 1]) + " " + shape_to_string(in[i]->shape()) +
                             " should have " + std::to_string(c) + " values (one per channel)");
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x.shape()));
    if (x.numel() == 0) return ok_status();
    if (small_ && threads_for(static_cast<double>(x.numel()), threads_.max) == 1) {
      const int64_t s = x.numel() / (n * c);
      if (!folded_.empty()) {
        affine_channels(x.data<float>(), n, c, s, folded_.data(), folded_.data() + c,
                        y->data<float>());
        return ok_status();
      }
      ObjectPool<std::vector<float>>::Lease run = per_run_.acquire();
      run->resize(static_cast<size_t>(2 * c));
      fold_statistics(in[1]->data<float>(), in[2]->data<float>(), in[3]->data<float>(),
                      in[4]->data<float>(), epsilon_, c, run->data(), run->data() + c);
      affine_channels(x.data<float>(), n, c, s, run->data(), run->data() + c, y->data<float>());
      return ok_status();
    }
    const Shape shape{n, c, x.numel() / (n * c), 1};
    RECUR_ASSIGN_OR_RETURN(auto prim, cache_.get(shape, [&]() {
      const auto md = dense_desc(shape);
      auto d = [&] {
        return dnnl::batch_normalization_forward::desc(
            dnnl::prop_kind::forward_inference, md, epsilon_,
            dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                dnnl::normalization_flags::use_shift);
      };
      return make_primitive<dnnl::batch_normalization_forward>(
          d, user_scratchpad_attr(), threads_for(static_cast<double>(x.numel()), threads_), what_);
    }));
    const auto md = dense_desc(shape);
    const auto vec = dense_desc({c});
    return execute_primitive(*prim,
                             {{DNNL_ARG_SRC, md, x.raw_data()},
                              {DNNL_ARG_DST, md, y->raw_data()},
                              {DNNL_ARG_SCALE, vec, in[1]->raw_data()},
                              {DNNL_ARG_SHIFT, vec, in[2]->raw_data()},
                              {DNNL_ARG_MEAN, vec, in[3]->raw_data()},
                              {DNNL_ARG_VARIANCE, vec, in[4]->raw_data()}},
                             scratch_, what_);
  }
  // Y = a X + b per channel, element by element (oneDNN's primitive takes Y over X as well).
  uint32_t overwritable_inputs() const override { return 1; }

 private:
  float epsilon_;
  Threads threads_;
  std::string what_;
  std::vector<float> folded_;
  bool small_;
  mutable ObjectPool<std::vector<float>> per_run_;  // a and b of non-constant statistics
  mutable PrimCache<Shape> cache_;
  mutable ScratchPool scratch_;
};

Claim claim_batch_norm(const Node& n, const Graph& g) {
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (n.has_output(i)) return Claim::decline("the running statistics outputs (training)");
  }
  AttrReader a(n);
  const bool training = a.get_int("training_mode", 0) != 0;
  const bool spatial = a.get_int("spatial", 1) != 0;
  if (!a.status().ok()) return Claim::decline(a.status().message());
  if (training) return Claim::decline("training_mode=1");
  if (!spatial) return Claim::decline("spatial=0 (per-activation statistics)");
  for (size_t i = 1; i < 5; ++i) {
    if (!n.has_input(i)) return Claim::decline("an input is missing");
    // The opset 15 statistics may be of another float type than X.
    const DType t = g.value(n.inputs[i]).type.dtype;
    if (t != DType::kFloat32 && t != DType::kUndefined) {
      return Claim::decline("a parameter of type " + std::string(dtype_name(t)));
    }
  }
  return Claim::accept();
}

}  // namespace

void register_batch_normalization(KernelRegistry& r) {
  r.add({.op_type = "BatchNormalization",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const float eps = a.get_float("epsilon", 1e-5f);
           RECUR_RETURN_IF_ERROR(a.status());
           // Constant statistics of one channel count are folded now.
           std::vector<float> folded;
           const Tensor* p[4];
           bool constant = true;
           for (size_t i = 0; i < 4; ++i) {
             p[i] = ctx.constant_input(i + 1);
             constant = constant && p[i] && p[i]->dtype() == DType::kFloat32 &&
                        p[i]->numel() == p[0]->numel();
           }
           if (constant) {
             const int64_t c = p[0]->numel();
             folded.resize(static_cast<size_t>(2 * c));
             fold_statistics(p[0]->data<float>(), p[1]->data<float>(), p[2]->data<float>(),
                             p[3]->data<float>(), eps, c, folded.data(), folded.data() + c);
           }
           return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(
               eps, options_of(ctx).team(), ctx.node().describe(), std::move(folded)));
         },
         .claim = claim_batch_norm});
}

}  // namespace recur::onednn
