// GroupNormalization: normalises each group of channels of each instance, then scales and
// shifts. Opset 18 has one scale and bias per group; opset 21 one per channel. The statistics
// are taken in double, at least as precise as any stash_type.
#include <cmath>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class GroupNormKernel final : public Kernel {
 public:
  GroupNormKernel(int64_t groups, double epsilon) : groups_(groups), epsilon_(epsilon) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* bias, required_input(ctx, 2));
    const Shape& s = x->shape();
    if (s.size() < 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must be [N, C, ...], not " + shape_to_string(s));
    }
    const int64_t n = s[0], c = s[1];
    if (c % groups_ != 0) {
      return ctx.error(ErrorCode::kInvalidArgument, std::to_string(c) + " channels cannot form " +
                                                        std::to_string(groups_) + " groups");
    }
    // Opset 21 scales each channel, opset 18 each group.
    const int64_t params = ctx.node().opset >= 21 ? c : groups_;
    for (const Tensor* p : {scale, bias}) {
      if (p->numel() != params) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "scale and bias must have " + std::to_string(params) +
                             " elements at opset " + std::to_string(ctx.node().opset) + ", not " +
                             shape_to_string(p->shape()));
      }
    }
    const int64_t per_channel = dims_product_of(s, 2);
    const int64_t channels_per_group = c / groups_;
    const int64_t group_size = channels_per_group * per_channel;
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xs, read_as_double(*x, "X"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> sc, read_as_double(*scale, "scale"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> bs, read_as_double(*bias, "bias"));
    std::vector<double> ys(xs.size());
    for (int64_t i = 0; i < n * groups_; ++i) {
      const auto base = static_cast<size_t>(i * group_size);
      double mean = 0, var = 0;
      for (int64_t j = 0; j < group_size; ++j) mean += xs[base + static_cast<size_t>(j)];
      mean /= static_cast<double>(group_size);
      for (int64_t j = 0; j < group_size; ++j) {
        const double d = xs[base + static_cast<size_t>(j)] - mean;
        var += d * d;
      }
      var /= static_cast<double>(group_size);
      const double inv = 1.0 / std::sqrt(var + epsilon_);
      const int64_t g = i % groups_;
      for (int64_t j = 0; j < group_size; ++j) {
        const auto p =
            static_cast<size_t>(params == c ? g * channels_per_group + j / per_channel : g);
        const size_t k = base + static_cast<size_t>(j);
        ys[k] = sc[p] * (xs[k] - mean) * inv + bs[p];
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), s));
    write_from_double(ys, *y);
    return ok_status();
  }

 private:
  static int64_t dims_product_of(const Shape& s, size_t from) {
    int64_t p = 1;
    for (size_t d = from; d < s.size(); ++d) p *= s[d];
    return p;
  }

  int64_t groups_;
  double epsilon_;
};

Result<std::unique_ptr<Kernel>> create_group_normalization(CompileContext& ctx) {
  AttrReader attrs(ctx.node());
  const int64_t groups = attrs.get_int("num_groups", 0);
  const float epsilon = attrs.get_float("epsilon", 1e-5f);
  if (!attrs.has("num_groups")) {
    return ctx.error(ErrorCode::kInvalidModel, "the num_groups attribute is required");
  }
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (groups <= 0) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "num_groups must be positive, not " + std::to_string(groups));
  }
  return std::make_unique<GroupNormKernel>(groups, epsilon);
}

}  // namespace

void register_group_normalization(Registrar& r) {
  r.add({.op_type = "GroupNormalization", .since = 18, .create = create_group_normalization},
        infer_same_as_input0);
}

}  // namespace recur::reference
