// BatchNormalization in inference (the given mean and variance) through oneDNN's batch
// normalization with global statistics, X as [N, C, spatial]. Training mode, its extra outputs,
// and per-activation statistics (spatial=0 before opset 9) go to the reference provider at load.
#include <tuple>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

namespace {

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(float epsilon, Threads threads, std::string what)
      : epsilon_(epsilon), threads_(threads), what_(std::move(what)) {}

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

 private:
  float epsilon_;
  Threads threads_;
  std::string what_;
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
           return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(
               eps, options_of(ctx).team(), ctx.node().describe()));
         },
         .claim = claim_batch_norm});
}

}  // namespace recur::onednn
