// Resize (opset 11 on) of float32 [N, C, spatial...] through oneDNN's resampling, where its
// arithmetic is ONNX's. oneDNN maps output coordinate y to (y + 0.5) * in / out - 0.5 (ONNX's
// half_pixel with the scale out / in) and clamps indices to the input, as ONNX's linear mode
// does; its nearest rounds that coordinate half away from zero. So it takes:
//   - linear, half_pixel or pytorch_half_pixel (no output size of 1), no antialias: with sizes
//     (ONNX's scale is then out / in) or integer scales (out = in * scale exactly);
//   - nearest, upsampling by integer scales: half_pixel or pytorch_half_pixel with
//     round_prefer_floor or round_prefer_ceil (no coordinate falls on a half), or asymmetric
//     with floor (what PyTorch exports for nn.Upsample), where y / s and the rounded
//     (y + 0.5) / s - 0.5 give the same index.
// N and C keep their sizes, scales or sizes are constants, there is no axes attribute. The rest
// stays with the reference provider, which says why.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

namespace {

using dnnl::memory;

struct ResizeAttrs {
  bool linear = false;
  std::string coord, nearest;
  int64_t antialias = 0;
  bool has_axes = false;
  std::string policy;
  static ResizeAttrs read(const Node& n) {
    ResizeAttrs a;
    const Attribute* m = n.attr("mode");
    const std::string mode = m ? m->s : "nearest";
    a.linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
    const Attribute* c = n.attr("coordinate_transformation_mode");
    a.coord = c ? c->s : "half_pixel";
    const Attribute* nm = n.attr("nearest_mode");
    a.nearest = nm ? nm->s : "round_prefer_floor";
    const Attribute* aa = n.attr("antialias");
    a.antialias = aa ? aa->i : 0;
    a.has_axes = n.attr("axes") != nullptr;
    const Attribute* p = n.attr("keep_aspect_ratio_policy");
    a.policy = p ? p->s : "stretch";
    if (!a.linear && mode != "nearest") a.coord = "";  // cubic: never taken
    return a;
  }
};

// The constant scales (input 2) or sizes (input 3), whichever is given and not empty.
struct ResizeTarget {
  std::vector<double> scales;
  std::vector<int64_t> sizes;
};

std::optional<ResizeTarget> constant_target(const Node& n, const Graph& g) {
  auto constant = [&](size_t i) -> const Tensor* {
    if (!n.has_input(i)) return nullptr;
    const Tensor* t = g.constant(n.inputs[i]);
    return t && t->numel() > 0 ? t : nullptr;
  };
  const Tensor* sc = constant(2);
  const Tensor* sz = constant(3);
  if ((sc != nullptr) == (sz != nullptr)) return std::nullopt;
  ResizeTarget t;
  if (sc) {
    if (sc->dtype() != DType::kFloat32) return std::nullopt;
    for (int64_t i = 0; i < sc->numel(); ++i) t.scales.push_back(sc->data<float>()[i]);
  } else {
    if (sz->dtype() != DType::kInt64) return std::nullopt;
    for (int64_t i = 0; i < sz->numel(); ++i) t.sizes.push_back(sz->data<int64_t>()[i]);
  }
  return t;
}

bool is_positive_integer(double v) { return v >= 1 && v == std::floor(v) && v < 65536; }

Claim claim_resize(const Node& n, const Graph& g) {
  if (n.opset < 11) return Claim::decline("Resize before opset 11 maps coordinates as asymmetric");
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  const TypeInfo& t = g.value(n.inputs[0]).type;
  if (!t.shape || t.shape->size() < 3 || t.shape->size() > 5) {
    return Claim::decline("oneDNN resamples [N, C] and 1 to 3 spatial dimensions of known rank");
  }
  const size_t rank = t.shape->size();
  const ResizeAttrs a = ResizeAttrs::read(n);
  if (a.has_axes || a.policy != "stretch" || a.antialias != 0) {
    return Claim::decline("axes, keep_aspect_ratio_policy and antialias stay with the reference");
  }
  const std::optional<ResizeTarget> target = constant_target(n, g);
  if (!target) return Claim::decline("scales or sizes is not a constant");
  const std::vector<Dim>& in = *t.shape;
  if (!target->scales.empty()) {
    if (target->scales.size() != rank || target->scales[0] != 1 || target->scales[1] != 1) {
      return Claim::decline("oneDNN resizes the spatial dimensions only");
    }
    for (size_t i = 2; i < rank; ++i) {
      if (!is_positive_integer(target->scales[i])) {
        return Claim::decline("oneDNN takes integer upsampling scales (its factor is out / in)");
      }
    }
  } else {
    if (target->sizes.size() != rank) return Claim::decline("sizes does not match the rank");
    for (size_t i = 0; i < 2; ++i) {
      if (!in[i].is_fixed() || in[i].value != target->sizes[i]) {
        return Claim::decline("oneDNN resizes the spatial dimensions only");
      }
    }
    for (size_t i = 2; i < rank; ++i) {
      if (target->sizes[i] <= 0) return Claim::decline("an output size is not positive");
      if (a.coord == "pytorch_half_pixel" && target->sizes[i] == 1) {
        return Claim::decline("pytorch_half_pixel maps an output of size 1 differently");
      }
      if (!a.linear &&
          (!in[i].is_fixed() || in[i].value <= 0 || target->sizes[i] % in[i].value != 0)) {
        return Claim::decline("nearest on oneDNN takes integer upsampling only");
      }
    }
  }
  if (a.linear) {
    if (a.coord != "half_pixel" && a.coord != "pytorch_half_pixel") {
      return Claim::decline("coordinate_transformation_mode " + a.coord +
                            " is not oneDNN's half-pixel mapping");
    }
    return Claim::accept();
  }
  const bool half = (a.coord == "half_pixel" || a.coord == "pytorch_half_pixel") &&
                    (a.nearest == "round_prefer_floor" || a.nearest == "round_prefer_ceil");
  const bool asym = a.coord == "asymmetric" && a.nearest == "floor";
  if (!half && !asym) {
    return Claim::decline("nearest with " + a.coord + " and " + a.nearest +
                          " rounds differently from oneDNN");
  }
  return Claim::accept();
}

struct ResizePlan {
  Shape out;
  memory::desc x, y;
  CachedPrimitive prim;
};

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(bool linear, ResizeTarget target, Threads threads, std::string what)
      : linear_(linear), target_(std::move(target)), threads_(threads), what_(std::move(what)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "the input X is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN Resize runs float32 on the host");
    }
    RECUR_ASSIGN_OR_RETURN(auto plan,
                           cache_.get(x->shape(), [&] { return make_plan(ctx, x->shape()); }));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, plan->out));
    if (y->numel() == 0) return ok_status();
    return execute_primitive(
        plan->prim,
        {{DNNL_ARG_SRC, plan->x, x->raw_data()}, {DNNL_ARG_DST, plan->y, y->raw_data()}}, scratch_,
        what_);
  }

 private:
  Result<ResizePlan> make_plan(const KernelContext& ctx, const Shape& in) const {
    const size_t rank = in.size();
    const size_t given = target_.scales.empty() ? target_.sizes.size() : target_.scales.size();
    if (rank != given) {
      return ctx.error(ErrorCode::kInvalidArgument, "X has rank " + std::to_string(rank) +
                                                        ", scales or sizes " +
                                                        std::to_string(given) + " values");
    }
    ResizePlan plan;
    plan.out = in;
    for (size_t i = 2; i < rank; ++i) {
      plan.out[i] =
          target_.scales.empty()
              ? target_.sizes[i]
              : static_cast<int64_t>(std::floor(static_cast<double>(in[i]) * target_.scales[i]));
    }
    if (!target_.sizes.empty() && (in[0] != target_.sizes[0] || in[1] != target_.sizes[1])) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "sizes " +
                           shape_to_string(Shape(target_.sizes.begin(), target_.sizes.end())) +
                           " resizes N or C of X " + shape_to_string(in));
    }
    if (shape_numel(plan.out) == 0) return plan;
    if (shape_numel(in) == 0) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X " + shape_to_string(in) + " is empty: there is nothing to resize");
    }
    plan.x = dense_desc(in);
    plan.y = dense_desc(plan.out);
    const auto alg =
        linear_ ? dnnl::algorithm::resampling_linear : dnnl::algorithm::resampling_nearest;
    RECUR_ASSIGN_OR_RETURN(
        plan.prim,
        make_primitive<dnnl::resampling_forward>(
            [&] {
              return dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference, alg, plan.x,
                                                    plan.y);
            },
            user_scratchpad_attr(),
            threads_for(static_cast<double>(shape_numel(plan.out)) * 8, threads_), what_));
    return plan;
  }

  bool linear_;
  ResizeTarget target_;
  Threads threads_;
  std::string what_;
  mutable PrimCache<Shape, ResizePlan> cache_;
  mutable ScratchPool scratch_;
};

}  // namespace

void register_resize(KernelRegistry& r) {
  r.add({.op_type = "Resize",
         .since = 11,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           const Claim c = claim_resize(ctx.node(), ctx.graph());
           if (!c.yes) return ctx.error(ErrorCode::kNotImplemented, c.reason);
           std::optional<ResizeTarget> target = constant_target(ctx.node(), ctx.graph());
           return std::unique_ptr<Kernel>(std::make_unique<ResizeKernel>(
               ResizeAttrs::read(ctx.node()).linear, std::move(*target), options_of(ctx).team(),
               ctx.node().describe()));
         },
         .claim = &claim_resize});
}

}  // namespace recur::onednn
