// What NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss share: the attributes and the
// weighted, reduced gather of negative log-probabilities.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/provider/kernel.h"

namespace recur::reference {

struct LossAttrs {
  enum class Reduction { kNone, kSum, kMean };
  Reduction reduction = Reduction::kMean;
  std::optional<int64_t> ignore_index;
};

Result<LossAttrs> read_loss_attrs(const Node& node);

// Writes output `out` of the node: loss[n, d...] = -log_prob[n, target[n, d...], d...] *
// weight[target] (0 where target is ignore_index), reduced as asked; "mean" divides by the sum
// of the weights of the targets that are not ignored. `log_prob` holds the input of shape
// `shape` = [N, C, d...] as doubles; the output has `dtype`.
Status weighted_nll(KernelContext& ctx, const std::vector<double>& log_prob, const Shape& shape,
                    const Tensor& target, const Tensor* weight, const LossAttrs& attrs, DType dtype,
                    size_t out);

// Static rule for output 0: the target's shape with reduction "none", else a scalar; the dtype
// of input 0.
Status infer_loss_output(InferContext& ctx);

}  // namespace recur::reference
