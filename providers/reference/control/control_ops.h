// Registration functions of control/, and helpers shared by If, Loop and Scan.
#pragma once

#include <span>
#include <vector>

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_if(Registrar& r);
void register_loop(Registrar& r);
void register_scan(Registrar& r);

// Stacks equally shaped tensors along a new axis `axis` (reversed order if `reverse`).
// `empty_shape` is the element shape used when `parts` is empty.
Result<Tensor> stack_tensors(std::span<const Tensor> parts, int64_t axis, bool reverse, DType dtype,
                             const Shape& empty_shape);

// Index `index` of `t` along `axis`, as a tensor of rank - 1.
Tensor slice_along(const Tensor& t, int64_t axis, int64_t index);

// An error of iteration `it` of a Loop or Scan. Those that end the loop whatever the body does
// (the memory limit, cancellation) name the loop node and the iteration before the body node
// where they happened; others keep the body node's name first.
Status iteration_error(const KernelContext& ctx, int64_t it, const Status& st);

}  // namespace recur::reference
