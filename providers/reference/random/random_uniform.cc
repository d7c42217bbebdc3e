// RandomUniform and RandomUniformLike: values drawn uniformly from [low, high), of the `shape`
// attribute or of the input's shape. Each execution draws anew; the node's `seed` attribute or
// the session's seed makes the draws repeat from run to run (SessionOptions::random_seed).
#include "providers/reference/random/random_ops.h"

namespace recur::reference {

void register_random_uniform(Registrar& r) {
  register_fill(
      r, "RandomUniform",
      {.a = "low", .a_default = 0.0f, .b = "high", .b_default = 1.0f, .fill = fill_uniform});
}

}  // namespace recur::reference
