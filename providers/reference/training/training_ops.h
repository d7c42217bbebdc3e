// Registration functions of training/ (the ai.onnx.preview.training optimizers), and the loop
// they share.
#pragma once

#include <cstdint>
#include <functional>

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

inline constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

void register_adagrad(Registrar& r);
void register_adam(Registrar& r);
void register_momentum(Registrar& r);

// One element's update: x and the optimizer's states (states[k] of the k-th state tensor) are
// updated in place, from the learning rate r, the step count t and the gradient g.
using ElementUpdate = std::function<void(double r, int64_t t, double& x, double g, double* states)>;

// Runs an optimizer node whose inputs are R (a float scalar), T (an int64 scalar), then n
// tensors X, n gradients G and, for each of `num_states` states, n tensors; its outputs are the
// n new X and the n new values of each state, in the same order. Every G and state tensor has
// its X's shape; outputs have X's dtype.
Status run_optimizer(KernelContext& ctx, size_t num_states, const ElementUpdate& update);

}  // namespace recur::reference
