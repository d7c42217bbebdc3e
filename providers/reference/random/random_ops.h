// The random operators: RandomNormal(Like), RandomUniform(Like), Bernoulli, Multinomial, and
// what they share with Dropout in training mode: the node's seed, the run's next draw, and the
// dtypes a draw may produce.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "providers/reference/common/registrar.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/kernel.h"
#include "runtime/provider/run_random.h"

namespace recur::reference {

void register_random_normal(Registrar& r);
void register_random_uniform(Registrar& r);
void register_bernoulli(Registrar& r);
void register_multinomial(Registrar& r);

// The `seed` attribute (a float, or for Dropout an int), as the key of the node's draws;
// nullopt when the node has none.
Result<std::optional<uint64_t>> seed_attr(const Node& node);

// The draw for one execution of a node: keyed by the node's seed or else the run's, and by
// the run's draw counter (SessionOptions::random_seed).
RandomDraw next_draw(const KernelContext& ctx, const std::optional<uint64_t>& seed);

// float16, float32, float64 or bfloat16: what RandomNormal and RandomUniform draw, and what
// Bernoulli, Multinomial and Dropout read.
bool is_draw_float(DType t);
inline constexpr const char* kDrawFloats = "float16, float32, float64 or bfloat16";

// The `dtype` attribute, nullopt when absent; an error naming the node when it is not a type
// `allowed` accepts. `what` ends the message: "float16, float32, float64 or bfloat16".
Result<std::optional<DType>> dtype_attr(const Node& node, bool (*allowed)(DType), const char* what);

// out[i] = mean + scale * (standard normal i of `draw`), for a tensor of a draw float dtype.
void fill_normal(Tensor& out, const RandomDraw& draw, double mean, double scale);
// out[i] = low + (high - low) * (uniform i of `draw` in [0, 1)).
void fill_uniform(Tensor& out, const RandomDraw& draw, double low, double high);

// RandomNormal, RandomUniform and their -Like forms: one draw filling output 0, shaped by the
// `shape` attribute or, in the -Like form, by input 0 (whose dtype is also the default output
// dtype). `fill` gets the attributes `a` and `b` (mean and scale; low and high).
using FillFn = void (*)(Tensor&, const RandomDraw&, double, double);
struct FillOp {
  const char* a = "";
  float a_default = 0;
  const char* b = "";
  float b_default = 0;
  FillFn fill = nullptr;
};
// Registers `op_type` and `op_type`Like.
void register_fill(Registrar& r, const std::string& op_type, const FillOp& op);

}  // namespace recur::reference
