// MeanVarianceNormalization (opsets 9, 13): y = (x - mean) / (sqrt(var) + 1e-9) over `axes`
// (default [0, 2, 3]), as the ONNX function body defines it.
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const int64_t rank = x->rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) {
      RECUR_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, "axis"));
      reduced[static_cast<size_t>(ax)] = true;
    }
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    // Each element's group: its index with the reduced dimensions dropped.
    const Shape& shape = x->shape();
    std::vector<int64_t> group(xs.size());
    int64_t groups = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[static_cast<size_t>(d)]) groups *= shape[static_cast<size_t>(d)];
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < xs.size(); ++i) {
      int64_t g = 0;
      for (int64_t d = 0; d < rank; ++d)
        if (!reduced[static_cast<size_t>(d)])
          g = g * shape[static_cast<size_t>(d)] + idx[static_cast<size_t>(d)];
      group[i] = g;
      for (int64_t d = rank; d-- > 0;) {
        if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
    std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0),
        cnt(static_cast<size_t>(groups), 0.0);
    for (size_t i = 0; i < xs.size(); ++i) {
      const auto g = static_cast<size_t>(group[i]);
      sum[g] += xs[i];
      sq[g] += xs[i] * xs[i];
      cnt[g] += 1;
    }
    std::vector<double> ys(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const auto g = static_cast<size_t>(group[i]);
      const double mean = sum[g] / cnt[g];
      const double var = sq[g] / cnt[g] - mean * mean;
      ys[i] = (xs[i] - mean) / (std::sqrt(var > 0 ? var : 0.0) + 1e-9);
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

void register_mean_variance_normalization(Registrar& r) {
  r.add({.op_type = "MeanVarianceNormalization",
         .since = 9,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           std::vector<int64_t> axes = r.get_ints("axes", {0, 2, 3});
           RECUR_RETURN_IF_ERROR(r.status());
           return std::make_unique<MvnKernel>(std::move(axes));
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
