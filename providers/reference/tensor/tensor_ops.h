// Registration functions of tensor/.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_identity(KernelRegistry& r);
void register_constant(KernelRegistry& r);
void register_transpose(KernelRegistry& r);
void register_squeeze(KernelRegistry& r);
void register_unsqueeze(KernelRegistry& r);
void register_reshape(KernelRegistry& r);
void register_flatten(KernelRegistry& r);
void register_concat(KernelRegistry& r);
void register_split(KernelRegistry& r);
void register_slice(KernelRegistry& r);
void register_gather(KernelRegistry& r);
void register_gather_elements(KernelRegistry& r);
void register_gather_nd(KernelRegistry& r);
void register_scatter_elements(KernelRegistry& r);  // ScatterElements and Scatter
void register_scatter_nd(KernelRegistry& r);
void register_shape(KernelRegistry& r);
void register_size(KernelRegistry& r);
void register_constant_of_shape(KernelRegistry& r);
void register_expand(KernelRegistry& r);
void register_tile(KernelRegistry& r);
void register_pad(KernelRegistry& r);
void register_range(KernelRegistry& r);
void register_dropout(KernelRegistry& r);
void register_one_hot(KernelRegistry& r);
void register_top_k(KernelRegistry& r);
void register_reverse_sequence(KernelRegistry& r);
void register_trilu(KernelRegistry& r);
void register_compress(KernelRegistry& r);
void register_non_zero(KernelRegistry& r);
void register_unique(KernelRegistry& r);
void register_eye_like(KernelRegistry& r);
void register_depth_to_space(KernelRegistry& r);
void register_space_to_depth(KernelRegistry& r);

// The output shape of Reshape for input shape `in` and shape input `spec` (shared with
// optimisation passes that fold reshapes).
Result<Shape> reshape_shape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero);

}  // namespace recur::reference
