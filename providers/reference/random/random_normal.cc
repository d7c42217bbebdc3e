// RandomNormal and RandomNormalLike: values drawn from N(mean, scale^2), of the `shape`
// attribute or of the input's shape. Each execution draws anew; the node's `seed` attribute or
// the session's seed makes the draws repeat from run to run (SessionOptions::random_seed).
#include "providers/reference/random/random_ops.h"

namespace recur::reference {

void register_random_normal(Registrar& r) {
  for (const bool like : {false, true}) {
    const FillOp op{.like = like,
                    .a = "mean",
                    .a_default = 0.0f,
                    .b = "scale",
                    .b_default = 1.0f,
                    .fill = fill_normal};
    r.add({.op_type = like ? "RandomNormalLike" : "RandomNormal",
           .since = 1,
           .create = [op](CompileContext& ctx) { return create_fill(ctx, op); },
           .shape_only_inputs = like ? std::vector<size_t>{0} : std::vector<size_t>{},
           .takes_strings = like},
          [like](InferContext& ctx) { return infer_fill(ctx, like); });
  }
}

}  // namespace recur::reference
