// RandomNormal and RandomNormalLike: values drawn from N(mean, scale^2), of the `shape`
// attribute or of the input's shape. Each execution draws anew; the node's `seed` attribute or
// the session's seed makes the draws repeat from run to run (SessionOptions::random_seed).
#include "providers/reference/random/random_ops.h"

namespace recur::reference {

void register_random_normal(Registrar& r) {
  register_fill(
      r, "RandomNormal",
      {.a = "mean", .a_default = 0.0f, .b = "scale", .b_default = 1.0f, .fill = fill_normal});
}

}  // namespace recur::reference
