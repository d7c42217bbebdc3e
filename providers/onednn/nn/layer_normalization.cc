// LayerNormalization (opset 17) through oneDNN's layer normalization: X as [outer, size], where
// size is the product of the normalised dimensions (axis on), with Scale and B of `size`
// elements each. The primitive runs in training mode, which writes the statistics that the
// optional Mean and InvStdDev outputs take. A node whose Scale or B truly broadcast (fewer
// elements than the normalised shape) or whose stash_type is not float goes to the reference
// provider at load.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

namespace {

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, float epsilon, Threads threads, std::string what)
      : axis_(axis), epsilon_(epsilon), threads_(threads), what_(std::move(what)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale) {
      return ctx.error(ErrorCode::kInvalidArgument, "LayerNormalization needs X and Scale");
    }
    for (const Tensor* t : {x, scale, bias}) {
      if (t && (t->dtype() != DType::kFloat32 || !t->is_cpu())) {
        return ctx.error(ErrorCode::kNotImplemented,
                         "the oneDNN LayerNormalization runs float32 on the host");
      }
    }
    const int64_t rank = x->rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) {
      return ctx.error(
          ErrorCode::kOutOfRange,
          "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    int64_t size = 1;
    for (int64_t d = axis; d < rank; ++d) size *= x->dim(d);
    // The claim let through only Scale and B that cover the normalised shape; a model whose
    // shapes disagree at run time is refused here.
    for (const Tensor* t : {scale, bias}) {
      if (t && t->numel() != size) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         std::string(t == scale ? "Scale " : "B ") + shape_to_string(t->shape()) +
                             " does not cover the normalised shape of X " +
                             shape_to_string(x->shape()) + " from axis " + std::to_string(axis));
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, x->shape()));
    // Mean and InvStdDev: X's shape with 1 from axis on.
    Shape stat_shape(x->shape().begin(), x->shape().begin() + axis);
    stat_shape.resize(static_cast<size_t>(rank), 1);
    Tensor* mean = nullptr;
    Tensor* inv_std = nullptr;
    if (ctx.output_requested(1)) {
      RECUR_ASSIGN_OR_RETURN(mean, ctx.allocate_output(1, DType::kFloat32, stat_shape));
    }
    if (ctx.output_requested(2)) {
      RECUR_ASSIGN_OR_RETURN(inv_std, ctx.allocate_output(2, DType::kFloat32, stat_shape));
    }
    if (x->numel() == 0) {
      // Rows of no elements (the normalised shape is empty) have no statistics: 0 / 0.
      for (Tensor* t : {mean, inv_std})
        if (t) std::fill_n(t->data<float>(), t->numel(), std::numeric_limits<float>::quiet_NaN());
      return ok_status();
    }
    const int64_t outer = x->numel() / size;
    const Shape shape{outer, size};
    const bool shift = bias != nullptr;
    RECUR_ASSIGN_OR_RETURN(auto prim, cache_.get(std::make_tuple(shape, shift), [&]() {
      const auto md = dense_desc(shape);
      auto flags = dnnl::normalization_flags::use_scale;
      if (shift) flags |= dnnl::normalization_flags::use_shift;
      auto d = [&] {
        return dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_training, md,
                                                       epsilon_, flags);
      };
      return make_primitive<dnnl::layer_normalization_forward>(
          d, user_scratchpad_attr(), threads_for(static_cast<double>(x->numel()), threads_), what_);
    }));
    const auto md = dense_desc(shape);
    const auto vec = dense_desc({size});
    const auto stat_md = dense_desc({outer});
    ScratchPool::Lease stat_buf = buffers_.acquire(static_cast<size_t>(outer) * 2 * sizeof(float));
    float* var = static_cast<float*>(stat_buf.data());
    const Bind args[] = {{DNNL_ARG_SRC, md, x->raw_data()},
                         {DNNL_ARG_DST, md, y->raw_data()},
                         {DNNL_ARG_SCALE, vec, scale->raw_data()},
                         {DNNL_ARG_MEAN, stat_md, mean ? mean->data<float>() : var + outer},
                         {DNNL_ARG_VARIANCE, stat_md, var},
                         {DNNL_ARG_SHIFT, vec, shift ? bias->raw_data() : nullptr}};
    RECUR_RETURN_IF_ERROR(
        execute_primitive(*prim, std::span<const Bind>(args, shift ? 6 : 5), scratch_, what_));
    if (inv_std) {
      float* out = inv_std->data<float>();
      for (int64_t i = 0; i < outer; ++i) out[i] = 1.0f / std::sqrt(var[i] + epsilon_);
    }
    return ok_status();
  }
  // oneDNN's layer normalization takes Y over X (it reads a row before writing it).
  uint32_t overwritable_inputs() const override { return 1; }

 private:
  int64_t axis_;
  float epsilon_;
  Threads threads_;
  std::string what_;
  mutable PrimCache<std::tuple<Shape, bool>> cache_;
  mutable ScratchPool scratch_;
  mutable ScratchPool buffers_;  // the variance, and the mean where no output takes it
};

// Scale (or B) covers X's normalised dimensions element for element: leading 1s aside, it has
// one dimension per normalised one, each equal to X's where X's is known, and above 1
// where it is not (a 1 there would broadcast if X's turned out larger).
std::string covers(const TypeInfo& t, const std::vector<Dim>& x_inner, const char* name) {
  if (!t.shape) return std::string(name) + "'s shape is not known at load";
  // Leading 1s (known) on either side change no element's place.
  std::vector<Dim> s = *t.shape;
  auto drop_ones = [](std::vector<Dim>& v) {
    size_t k = 0;
    while (k < v.size() && v[k].value == 1) ++k;
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
  };
  drop_ones(s);
  std::vector<Dim> inner = x_inner;
  drop_ones(inner);
  if (s.size() != inner.size()) {
    return std::string(name) + " has " + std::to_string(s.size()) +
           " dimensions (leading 1s aside) for the normalised " + std::to_string(inner.size());
  }
  for (size_t i = 0; i < s.size(); ++i) {
    const Dim& a = s[i];
    const Dim& b = inner[i];
    if (!a.is_fixed()) return std::string(name) + "'s dimensions are not known at load";
    if (b.is_fixed() ? a.value != b.value : a.value <= 1) {
      return std::string(name) + " broadcasts along the normalised dimensions";
    }
  }
  return {};
}

Claim claim_layer_norm(const Node& n, const Graph& g) {
  Claim c = claim_float32_input(n, g);
  if (!c.yes) return c;
  if (!n.has_input(0) || !n.has_input(1)) return Claim::decline("input X or Scale is missing");
  AttrReader a(n);
  const int64_t axis = a.get_int("axis", -1);
  const int64_t stash = a.get_int("stash_type", 1);
  if (!a.status().ok()) return Claim::decline(a.status().message());
  if (stash != 1) return Claim::decline("stash_type " + std::to_string(stash));
  const auto& xs = g.value(n.inputs[0]).type.shape;
  if (!xs) return Claim::decline("X's rank is not known at load");
  const int64_t rank = static_cast<int64_t>(xs->size());
  const int64_t ax = axis < 0 ? axis + rank : axis;
  if (ax < 0 || ax >= rank) return Claim::decline("axis " + std::to_string(axis));
  const std::vector<Dim> inner(xs->begin() + ax, xs->end());
  for (size_t i = 1; i < 3; ++i) {
    if (!n.has_input(i)) continue;
    const std::string why = covers(g.value(n.inputs[i]).type, inner, i == 1 ? "Scale" : "B");
    if (!why.empty()) return Claim::decline(why);
  }
  return Claim::accept();
}

}  // namespace

void register_layer_normalization(KernelRegistry& r) {
  r.add({.op_type = "LayerNormalization",
         .since = 17,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const int64_t axis = a.get_int("axis", -1);
           const float eps = a.get_float("epsilon", 1e-5f);
           RECUR_RETURN_IF_ERROR(a.status());
           return std::unique_ptr<Kernel>(std::make_unique<LayerNormKernel>(
               axis, eps, options_of(ctx).team(), ctx.node().describe()));
         },
         .claim = claim_layer_norm});
}

}  // namespace recur::onednn
