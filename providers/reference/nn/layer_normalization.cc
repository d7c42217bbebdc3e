// LayerNormalization (opset 17): normalises over the dimensions from `axis` on; Scale and B
// broadcast to them. Optional outputs Mean and InvStdDev have shape X.shape[:axis] + [1...].
#include <cmath>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, double epsilon) : axis_(axis), epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    const Tensor* bias = ctx.input(2);
    RECUR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, x->rank(), "axis"));
    const Shape inner(x->shape().begin() + axis, x->shape().end());
    if (!broadcastable_to(scale->shape(), inner) ||
        (bias && !broadcastable_to(bias->shape(), inner))) {
      return invalid_argument("Scale " + shape_to_string(scale->shape()) +
                              (bias ? " and B " + shape_to_string(bias->shape()) : "") +
                              " must broadcast to the normalised shape " + shape_to_string(inner));
    }
    if (scale->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype())) {
      return invalid_argument("X, Scale and B must have the same dtype");
    }
    const int64_t size = shape_numel(inner);
    // The rows: with an empty normalised shape there are still rows, whose statistics are
    // 0 / 0 (NaN), not left unwritten.
    const int64_t outer = shape_numel(Shape(x->shape().begin(), x->shape().begin() + axis));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    Shape stat_shape(x->shape().begin(), x->shape().begin() + axis);
    stat_shape.resize(x->shape().size(), 1);
    // stash_type=1: the statistics are float32.
    float* mean_out = nullptr;
    float* inv_out = nullptr;
    if (ctx.output_requested(1)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(1, DType::kFloat32, stat_shape));
      mean_out = t->data<float>();
    }
    if (ctx.output_requested(2)) {
      RECUR_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(2, DType::kFloat32, stat_shape));
      inv_out = t->data<float>();
    }
    // A row at a time in double, straight from X into Y; Scale and B expanded to the normalised
    // shape once per run into buffers each thread keeps (no allocation once warm).
    thread_local std::vector<double> sc_full, bs_full;
    const bool handled = visit_dtype(kNnFloatTypes, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ComputeView<T> xv(*x), sv(*scale);
      ComputeOut<T> yv(*y);
      sc_full.assign(static_cast<size_t>(size), 0.0);
      bs_full.assign(static_cast<size_t>(size), 0.0);
      const Shape sc_shape = scale->shape();
      for_each_broadcast<1>(inner, {&sc_shape}, [&](int64_t i, const std::array<int64_t, 1>& o) {
        sc_full[static_cast<size_t>(i)] = static_cast<double>(sv.data()[o[0]]);
      });
      if (bias) {
        ComputeView<T> bv(*bias);
        const Shape b_shape = bias->shape();
        for_each_broadcast<1>(inner, {&b_shape}, [&](int64_t i, const std::array<int64_t, 1>& o) {
          bs_full[static_cast<size_t>(i)] = static_cast<double>(bv.data()[o[0]]);
        });
      }
      for (int64_t o = 0; o < outer; ++o) {
        const auto* xo = xv.data() + o * size;
        auto* yo = yv.data() + o * size;
        using C = std::remove_reference_t<decltype(*yo)>;
        double mean = 0, var = 0;
        for (int64_t j = 0; j < size; ++j) mean += static_cast<double>(xo[j]);
        mean /= static_cast<double>(size);
        for (int64_t j = 0; j < size; ++j) {
          const double d = static_cast<double>(xo[j]) - mean;
          var += d * d;
        }
        var /= static_cast<double>(size);
        const double inv = 1.0 / std::sqrt(var + epsilon_);
        if (mean_out) mean_out[o] = static_cast<float>(mean);
        if (inv_out) inv_out[o] = static_cast<float>(inv);
        for (int64_t j = 0; j < size; ++j) {
          yo[j] = static_cast<C>((static_cast<double>(xo[j]) - mean) * inv *
                                     sc_full[static_cast<size_t>(j)] +
                                 bs_full[static_cast<size_t>(j)]);
        }
      }
      yv.flush();
    });
    if (!handled) return not_implemented("dtype " + dtype_str(x->dtype()) + " is not supported");
    return ok_status();
  }

 private:
  int64_t axis_;
  double epsilon_;
};

Status infer_layer_norm(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  ctx.set_output(0, x);
  AttrReader r(ctx.node());
  const int64_t axis = r.get_int("axis", -1);
  RECUR_RETURN_IF_ERROR(r.status());
  TypeInfo stat;
  stat.dtype = DType::kFloat32;
  if (x.has_rank()) {
    const int64_t rank = x.rank();
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a >= 0 && a < rank) {
      std::vector<Dim> dims(x.shape->begin(), x.shape->begin() + a);
      dims.resize(static_cast<size_t>(rank), Dim{1, {}});
      stat.shape = dims;
    }
  }
  for (size_t i = 1; i < ctx.num_outputs() && i < 3; ++i)
    if (ctx.node().has_output(i)) ctx.set_output(i, stat);
  return ok_status();
}

}  // namespace

void register_layer_normalization(Registrar& r) {
  r.add({.op_type = "LayerNormalization",
         .since = 17,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t axis = r.get_int("axis", -1);
           const double eps = r.get_float("epsilon", 1e-5f);
           const int64_t stash = r.get_int("stash_type", 1);
           RECUR_RETURN_IF_ERROR(r.status());
           if (stash != 1) {
             return ctx.error(ErrorCode::kNotImplemented,
                              "stash_type " + std::to_string(stash) + " is not supported");
           }
           return std::make_unique<LayerNormKernel>(axis, eps);
         }},
        infer_layer_norm);
}

}  // namespace recur::reference
