// ConvTranspose (1-D to 3-D, groups, dilations, output_padding) through oneDNN's
// deconvolution. The geometry is the one every provider shares (runtime/graph/
// conv_transpose_shape.h). oneDNN's deconvolution has no output_padding: the extra positions
// at the end become a smaller right padding, which oneDNN accepts down to 1 - stride. A node
// whose paddings need more than that goes to the reference provider at load, and so does one
// with output_shape or SAME auto_pad whose X and W shapes are not all known at load (its
// paddings depend on X's size). Small 1-D ones with constant weights (a vocoder's upsampling)
// run on recur's own loop instead, where a oneDNN call costs more than the work, and so do 1-D
// depthwise ones of any size, which oneDNN runs as a GEMM per group.
#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/nn/layout_prim.h"
#include "providers/onednn/nn/nn.h"
#include "runtime/graph/conv_transpose_shape.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

// oneDNN's consistency rule for a deconvolution's right padding, with output_padding taken
// out of it.
bool right_pad_fits(int64_t pad_end, int64_t output_padding, int64_t stride) {
  return pad_end - output_padding + stride > 0;
}

// A 1-D depthwise transposed convolution (one input and one output channel a group: the
// upsampling of StyleTTS2's and Kokoro's residual blocks). Output position o takes X's step t
// through tap j where o = t stride - pad + j dilation, so the outputs of one phase
// (o mod stride) are a 1-D correlation of X's row over consecutive steps, 16 outputs a vector.
// oneDNN runs a GEMM per group: [2, 256, 40] by k=3, stride 2 took 276 us there and 74 on the
// reference provider.
struct DepthwiseDeconv {
  int64_t k = 0, stride = 1, Ti = 0, To = 0;
  int64_t left = 0, padded = 0;  // X's row at `left` in a zeroed row of `padded` values
  // Per phase r (outputs q stride + r): the taps that reach it, as (j, t - q).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> taps;
};

std::shared_ptr<DepthwiseDeconv> depthwise_deconv(int64_t k, int64_t stride, int64_t dilation,
                                                  int64_t pad, int64_t Ti, int64_t To) {
  auto d = std::make_shared<DepthwiseDeconv>();
  d->k = k;
  d->stride = stride;
  d->Ti = Ti;
  d->To = To;
  d->taps.resize(static_cast<size_t>(stride));
  int64_t min_off = 0, max_off = 0;
  for (int64_t r = 0; r < stride; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t num = r + pad - j * dilation;  // (t - q) stride
      if (((num % stride) + stride) % stride != 0) continue;
      const int64_t off = num / stride;
      d->taps[static_cast<size_t>(r)].emplace_back(j, off);
      min_off = std::min(min_off, off);
      max_off = std::max(max_off, off);
    }
  }
  const int64_t qmax = (To + stride - 1) / stride;
  d->left = -min_off;
  // A vector of outputs from q reads steps q + off to q + off + 15.
  d->padded = d->left + std::max(Ti, qmax + max_off + avx512::kLanes) + avx512::kLanes;
  return d;
}

// One row: x is X's row inside its zeroed padding, w the channel's k taps. Taps outside X
// are masked out of the sum rather than multiplied by the padding, so that an infinite
// weight there does not make a NaN the reference provider (which skips them) would not.
RECUR_AVX512 void depthwise_deconv_row(const DepthwiseDeconv& d, const float* x, const float* w,
                                       float bias, float* y) {
  const __m512i index =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(d.stride)));
  for (int64_t r = 0; r < d.stride && r < d.To; ++r) {
    const int64_t count = (d.To - r + d.stride - 1) / d.stride;
    const auto& taps = d.taps[static_cast<size_t>(r)];
    for (int64_t q = 0; q < count; q += avx512::kLanes) {
      __m512 acc = _mm512_set1_ps(bias);
      for (const auto& [j, off] : taps) {
        // Lanes l with 0 <= q + off + l < Ti.
        const int64_t a = q + off;
        const int64_t lo = std::clamp<int64_t>(-a, 0, avx512::kLanes);
        const int64_t hi = std::clamp<int64_t>(d.Ti - a, 0, avx512::kLanes);
        if (hi <= lo) continue;
        const auto m = static_cast<__mmask16>(avx512::lanes(hi) & ~avx512::lanes(lo));
        acc = _mm512_mask3_fmadd_ps(_mm512_set1_ps(w[j]), _mm512_loadu_ps(x + d.left + a), acc, m);
      }
      const __mmask16 out = avx512::lanes(count - q);
      if (d.stride == 1) {
        _mm512_mask_storeu_ps(y + q, out, acc);
      } else {
        _mm512_mask_i32scatter_ps(y + q * d.stride + r, out, index, acc, sizeof(float));
      }
    }
  }
}

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(ConvTransposeAttrs attrs, Threads threads, Tensor constant_w,
                      std::string what, bool small)
      : attrs_(std::move(attrs)),
        threads_(threads),
        constant_w_(std::move(constant_w)),
        what_(std::move(what)),
        packs_(threads),
        small_(small && avx512::have_avx512()) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return ctx.error(ErrorCode::kInvalidArgument, "ConvTranspose needs X and W");
    for (const Tensor* t : {x, w, b}) {
      if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) {
        return ctx.error(ErrorCode::kNotImplemented,
                         "the oneDNN ConvTranspose runs float32 on the host");
      }
    }
    const auto key = std::make_tuple(x->shape(), w->shape(), b ? b->shape() : Shape{-1});
    RECUR_ASSIGN_OR_RETURN(auto plan, plans_.get(key, [&] { return make_plan(ctx, *x, *w, b); }));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, plan->y));
    if (y->numel() == 0) return ok_status();
    const void* bias = b ? b->raw_data() : nullptr;
    if (plan->bias_only) {
      float* out = y->data<float>();
      const int64_t per_channel = y->numel() / (plan->y[0] * plan->y[1]);
      for (int64_t i = 0; i < y->numel(); ++i)
        out[i] = b ? b->data<float>()[(i / per_channel) % plan->y[1]] : 0.0f;
      return ok_status();
    }
    if (plan->small) return run_small(*plan->small, *x, b, *y);
    if (plan->depthwise) return run_depthwise(*plan->depthwise, *x, *w, b, *y);
    if (plan->layout.prim.primitive) {
      return run_layout_prim(plan->layout, plan->x, x->raw_data(), plan->yd, y->raw_data(), plan->b,
                             bias, buffers_, scratch_, what_);
    }
    const Bind args[] = {{DNNL_ARG_SRC, plan->x, x->raw_data()},
                         {DNNL_ARG_WEIGHTS, plan->w, w->raw_data()},
                         {DNNL_ARG_DST, plan->yd, y->raw_data()},
                         {DNNL_ARG_BIAS, plan->b, bias}};
    return execute_primitive(plan->plain, std::span<const Bind>(args, b ? 4 : 3), scratch_, what_);
  }

 private:
  // A 1-D transposed convolution of group 1 on recur's own loop: each input step's C values
  // times W as a [C][M k] matrix (ONNX's layout already), four steps at a time (avx512.h),
  // each product row then added into the M x k outputs it reaches.
  struct SmallDeconv {
    std::shared_ptr<const avx512::PackedMatrix> w;  // [C][M k], shared by the plans
    int64_t C = 0, M = 0, k = 0, stride = 1, dilation = 1, pad = 0, Ti = 0, To = 0;
  };
  struct Plan {
    Shape y;
    std::shared_ptr<SmallDeconv> small;
    std::shared_ptr<DepthwiseDeconv> depthwise;
    bool bias_only = false;    // X has no channels: nothing to convolve
    memory::desc x, w, yd, b;  // the plain layouts; w describes ONNX's [C, M/G, k...] in place
    memory::dims strides, dilations, pad_l, pad_r;
    double macs = 0;
    LayoutPrim layout;      // with a primitive when W is constant and oneDNN has a layout for it
    CachedPrimitive plain;  // otherwise
  };

  Result<Plan> make_plan(const KernelContext& ctx, const Tensor& x, const Tensor& w,
                         const Tensor* b) const {
    auto geo = resolve_conv_transpose(attrs_, x.shape(), w.shape());
    if (!geo.ok()) return geo.status().with_context(what_);
    const size_t r = geo->kernel.size();
    if (r < 1 || r > 3) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "oneDNN's deconvolution takes 1 to 3 spatial dimensions, X is " +
                           shape_to_string(x.shape()));
    }
    if (b && (b->rank() != 1 || b->dim(0) != geo->m)) {
      return ctx.error(ErrorCode::kInvalidArgument, "B must have shape [" + std::to_string(geo->m) +
                                                        "], got " + shape_to_string(b->shape()));
    }
    Plan plan;
    plan.y = geo->y;
    for (size_t i = 0; i < r; ++i) {
      const int64_t pad_r = geo->pad_end[i] - geo->output_padding[i];
      // The claim lets through only nodes whose paddings fit; this guards the rule.
      if (geo->pad_begin[i] < 0 ||
          !right_pad_fits(geo->pad_end[i], geo->output_padding[i], geo->stride[i])) {
        return ctx.error(ErrorCode::kNotImplemented,
                         "paddings oneDNN's deconvolution cannot express");
      }
      plan.strides.push_back(geo->stride[i]);
      plan.dilations.push_back(geo->dilation[i] - 1);
      plan.pad_l.push_back(geo->pad_begin[i]);
      plan.pad_r.push_back(pad_r);
    }
    int64_t y_numel = 1;
    for (int64_t d : plan.y) y_numel *= d;
    if (y_numel == 0 || x.numel() == 0) {
      // oneDNN refuses zero-sized dimensions. With no input channels Y is all bias.
      plan.bias_only = y_numel != 0;
      return plan;
    }
    const int64_t G = attrs_.group, C = geo->c, M = geo->m;
    int64_t K = 1;
    for (int64_t k : geo->kernel) K *= k;
    // oneDNN's deconvolution weights are [G, M/G, C/G, k...]; ONNX's are [C, M/G, k...], that
    // is [G][C/G][M/G][k...]: the same bytes, described by strides.
    memory::dims wd, ws;
    if (G > 1) {
      wd = {G, M / G, C / G};
      ws = {(C / G) * (M / G) * K, K, (M / G) * K};
    } else {
      wd = {M, C};
      ws = {K, M * K};
    }
    int64_t inner = K;
    for (size_t i = 0; i < r; ++i) {
      wd.push_back(geo->kernel[i]);
      inner /= geo->kernel[i];
      ws.push_back(inner);
    }
    plan.x = dense_desc(x.shape());
    plan.w = strided_desc(wd, ws);
    plan.yd = dense_desc(plan.y);
    plan.b = b ? dense_desc({M}) : memory::desc();
    plan.macs = static_cast<double>(x.numel()) * static_cast<double>(M / G * K);
    if (small_ && r == 1 && G == 1 && plan.macs < 4194304.0 && constant_w_.defined() &&
        constant_w_.shape() == w.shape() && C * M * K <= (int64_t{1} << 18)) {
      auto sd = std::make_shared<SmallDeconv>();
      // Made at the first plan that wants it (plans are made under plans_' lock), then shared.
      if (!small_w_) {
        small_w_ = std::make_shared<const avx512::PackedMatrix>(avx512::pack_matrix(
            constant_w_.data<float>(), C, M * K, false, 1.0f, nullptr, 0, 0.0f));
      }
      sd->w = small_w_;
      sd->C = C;
      sd->M = M;
      sd->k = K;
      sd->stride = geo->stride[0];
      sd->dilation = geo->dilation[0];
      sd->pad = geo->pad_begin[0];
      sd->Ti = x.dim(2);
      sd->To = plan.y[2];
      plan.small = std::move(sd);
      return plan;
    }
    if (small_ && r == 1 && G > 1 && C == G && M == G) {
      plan.depthwise = depthwise_deconv(K, geo->stride[0], geo->dilation[0], geo->pad_begin[0],
                                        x.dim(2), plan.y[2]);
      return plan;
    }
    auto make = [&](const memory::desc& xd, const memory::desc& wdesc, const memory::desc& yd) {
      auto d = [&] {
        return dnnl::deconvolution_forward::desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, xd, wdesc,
            plan.b, yd, plan.strides, plan.dilations, plan.pad_l, plan.pad_r);
      };
      return make_primitive<dnnl::deconvolution_forward>(d, user_scratchpad_attr(),
                                                         threads_for(plan.macs, threads_), what_);
    };
    if (constant_w_.defined() && constant_w_.shape() == w.shape()) {
      RECUR_ASSIGN_OR_RETURN(
          plan.layout,
          make_layout_prim(plan.x, plan.w, plan.yd, constant_w_.raw_data(), packs_, what_, make));
      if (plan.layout.prim.primitive) return plan;
    }
    RECUR_ASSIGN_OR_RETURN(plan.plain, make(plan.x, plan.w, plan.yd));
    return plan;
  }

  Status run_small(const SmallDeconv& sd, const Tensor& x, const Tensor* b, Tensor& y) const {
    constexpr int kRows = avx512::kRowBlock;
    const int64_t C = sd.C, M = sd.M, k = sd.k, Np = sd.w->Np, N = x.dim(0);
    const int64_t Cp = (C + 15) / 16 * 16;
    // Np zeros, then kRows product rows of Np, then kRows input steps of C (padded).
    ScratchPool::Lease lease =
        buffers_.acquire(static_cast<size_t>(Np + kRows * Np + kRows * Cp) * sizeof(float));
    float* zeros = static_cast<float*>(lease.data());
    float* prod = zeros + Np;
    float* steps = prod + kRows * Np;
    std::fill(zeros, zeros + Np, 0.0f);
    const float* init[kRows] = {zeros, zeros, zeros, zeros};
    const float* in[kRows];
    float* out[kRows];
    for (int q = 0; q < kRows; ++q) {
      in[q] = steps + q * Cp;
      out[q] = prod + q * Np;
    }
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    for (int64_t n = 0; n < N; ++n) {
      float* yn = yp + n * M * sd.To;
      for (int64_t m = 0; m < M; ++m)
        std::fill(yn + m * sd.To, yn + (m + 1) * sd.To, b ? b->data<float>()[m] : 0.0f);
      const float* xn = xp + n * C * sd.Ti;
      for (int64_t t0 = 0; t0 < sd.Ti; t0 += kRows) {
        const int nr = static_cast<int>(std::min<int64_t>(kRows, sd.Ti - t0));
        for (int q = 0; q < nr; ++q)
          for (int64_t c = 0; c < C; ++c) steps[q * Cp + c] = xn[c * sd.Ti + t0 + q];
        avx512::multiply_rows(nr, init, in, C, static_cast<const float*>(sd.w->m->data), Np, out);
        for (int q = 0; q < nr; ++q) {
          // Step t reaches output positions t stride - pad + j dilation.
          const int64_t start = (t0 + q) * sd.stride - sd.pad;
          const int64_t j0 = start >= 0 ? 0 : (-start + sd.dilation - 1) / sd.dilation;
          const int64_t j1 =
              std::min<int64_t>(k, start < sd.To ? (sd.To - 1 - start) / sd.dilation + 1 : 0);
          for (int64_t m = 0; m < M; ++m) {
            const float* pm = out[q] + m * k;
            float* ym = yn + m * sd.To + start;
            for (int64_t j = j0; j < j1; ++j) ym[j * sd.dilation] += pm[j];
          }
        }
      }
    }
    return ok_status();
  }

  Status run_depthwise(const DepthwiseDeconv& d, const Tensor& x, const Tensor& w, const Tensor* b,
                       Tensor& y) const {
    const int64_t rows = x.dim(0) * x.dim(1), C = x.dim(1);
    ScratchPool::Lease lease = buffers_.acquire(static_cast<size_t>(d.padded) * sizeof(float));
    float* padded = static_cast<float*>(lease.data());
    std::fill(padded, padded + d.padded, 0.0f);
    const float* xp = x.data<float>();
    const float* wp = w.data<float>();
    float* yp = y.data<float>();
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t c = row % C;
      std::copy(xp + row * d.Ti, xp + (row + 1) * d.Ti, padded + d.left);
      depthwise_deconv_row(d, padded, wp + c * d.k, b ? b->data<float>()[c] : 0.0f,
                           yp + row * d.To);
    }
    return ok_status();
  }

  ConvTransposeAttrs attrs_;
  Threads threads_;
  Tensor constant_w_;  // W when it is a constant of the graph: reordered once per layout
  std::string what_;   // the node, for errors
  mutable PrimCache<std::tuple<Shape, Shape, Shape>, Plan> plans_;
  mutable WeightPacks packs_;  // constant W in the layouts of the plans' primitives
  mutable std::shared_ptr<const avx512::PackedMatrix> small_w_;  // W for SmallDeconv plans
  mutable ScratchPool scratch_;
  mutable ScratchPool buffers_;  // X and Y in the primitive's layouts; the small loop's rows
  bool small_;                   // 1-D ones may take recur's own loop
};

Claim claim_conv_transpose(const Node& n, const Graph& g) {
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  if (!n.has_input(0) || !n.has_input(1)) return Claim::decline("input X or W is missing");
  if (const auto& shape = g.value(n.inputs[0]).type.shape;
      shape && (shape->size() < 3 || shape->size() > 5)) {
    return Claim::decline("oneDNN's deconvolution takes 1-D to 3-D inputs, this one has rank " +
                          std::to_string(shape->size()));
  }
  auto a = ConvTransposeAttrs::read(n);
  if (!a.ok()) return Claim::decline(a.status().message());
  const TypeInfo& xt = g.value(n.inputs[0]).type;
  const TypeInfo& wt = g.value(n.inputs[1]).type;
  if (xt.is_static() && wt.is_static()) {
    // Every padding is known now: the rule is checked on them (run time checks them again).
    auto geo = resolve_conv_transpose(*a, xt.static_shape(), wt.static_shape());
    if (!geo.ok()) return Claim::decline(geo.status().message());
    for (size_t i = 0; i < geo->kernel.size(); ++i) {
      if (geo->pad_begin[i] < 0 ||
          !right_pad_fits(geo->pad_end[i], geo->output_padding[i], geo->stride[i])) {
        return Claim::decline("paddings (" + std::to_string(geo->pad_begin[i]) + ", " +
                              std::to_string(geo->pad_end[i]) + ") with output_padding " +
                              std::to_string(geo->output_padding[i]) + " and stride " +
                              std::to_string(geo->stride[i]) +
                              " are more than oneDNN's deconvolution takes");
      }
    }
    return Claim::accept();
  }
  if (!a->output_shape.empty() || a->auto_pad == "SAME_UPPER" || a->auto_pad == "SAME_LOWER") {
    return Claim::decline(
        "output_shape or SAME auto_pad with shapes unknown at load: the paddings depend on the "
        "input's size, and may be more than oneDNN's deconvolution takes");
  }
  const size_t r = a->output_padding.size();
  for (size_t i = 0; i < r; ++i) {
    const int64_t stride = i < a->strides.size() ? a->strides[i] : 1;
    const int64_t pad_end = a->auto_pad == "NOTSET" && a->pads.size() == 2 * r ? a->pads[i + r] : 0;
    if (!right_pad_fits(pad_end, a->output_padding[i], stride)) {
      return Claim::decline("output_padding " + std::to_string(a->output_padding[i]) +
                            " is not below stride + end pad (" + std::to_string(stride) + " + " +
                            std::to_string(pad_end) + ")");
    }
  }
  return Claim::accept();
}

}  // namespace

void register_conv_transpose(KernelRegistry& r) {
  r.add({.op_type = "ConvTranspose",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(ConvTransposeAttrs a, ConvTransposeAttrs::read(ctx.node()));
           const Tensor* cw = ctx.constant_input(1);
           Tensor w_value = cw && cw->dtype() == DType::kFloat32 && cw->is_cpu() ? *cw : Tensor();
           return std::unique_ptr<Kernel>(std::make_unique<ConvTransposeKernel>(
               std::move(a), options_of(ctx).team(), std::move(w_value), ctx.node().describe(),
               options_of(ctx).small_cells));
         },
         .claim = claim_conv_transpose});
}

}  // namespace recur::onednn
