#include "providers/reference/common/util.h"
#include "providers/reference/kernels.h"
#include "providers/reference/nn/nn_util.h"
#include "providers/reference/tensor/tensor_util.h"
#include "providers/reference/training/training_ops.h"

namespace recur::reference {

Status run_optimizer(KernelContext& ctx, size_t num_states, const ElementUpdate& update) {
  const size_t groups = 2 + num_states;  // X, G, states
  if (ctx.num_inputs() < 2 + groups || (ctx.num_inputs() - 2) % groups != 0 ||
      ctx.num_outputs() != (ctx.num_inputs() - 2) / groups * (1 + num_states)) {
    return ctx.error(ErrorCode::kInvalidModel, "the inputs must be R, T and " +
                                                   std::to_string(groups) +
                                                   " groups of n tensors, the outputs " +
                                                   std::to_string(1 + num_states) + " groups of n");
  }
  const size_t n = (ctx.num_inputs() - 2) / groups;
  RECUR_ASSIGN_OR_RETURN(const Tensor* r_t, required_input(ctx, 0));
  RECUR_ASSIGN_OR_RETURN(const Tensor* t_t, required_input(ctx, 1));
  auto r = read_scalar_double(*r_t, "R");
  if (!r.ok()) return r.status().with_context(ctx.node().describe());
  auto t = read_scalar_int(*t_t, "T");
  if (!t.ok()) return t.status().with_context(ctx.node().describe());
  for (size_t i = 0; i < n; ++i) {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 2 + i));
    auto xs = read_as_double(*x, "X");
    if (!xs.ok()) return xs.status().with_context(ctx.node().describe());
    std::vector<std::vector<double>> others;  // G, then the states
    for (size_t g = 1; g < groups; ++g) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 2 + g * n + i));
      if (s->shape() != x->shape()) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "input " + std::to_string(2 + g * n + i) + " has shape " +
                             shape_to_string(s->shape()) + " but its X has " +
                             shape_to_string(x->shape()));
      }
      auto v = read_as_double(*s, "G");
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      others.push_back(std::move(v).value());
    }
    std::vector<double> states(num_states);
    for (size_t e = 0; e < xs->size(); ++e) {
      for (size_t k = 0; k < num_states; ++k) states[k] = others[1 + k][e];
      update(*r, *t, (*xs)[e], others[0][e], states.data());
      for (size_t k = 0; k < num_states; ++k) others[1 + k][e] = states[k];
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * x_new, ctx.allocate_output(i, x->dtype(), x->shape()));
    write_from_double(*xs, *x_new);
    for (size_t k = 0; k < num_states; ++k) {
      const Tensor* old = ctx.input(2 + (2 + k) * n + i);
      RECUR_ASSIGN_OR_RETURN(Tensor * s_new,
                             ctx.allocate_output((1 + k) * n + i, old->dtype(), old->shape()));
      write_from_double(others[1 + k], *s_new);
    }
  }
  return ok_status();
}

void register_training_kernels(Registrar& r) {
  register_adagrad(r);
  register_adam(r);
  register_momentum(r);
}

}  // namespace recur::reference
