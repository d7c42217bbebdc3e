// Registration functions of tensor/.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_identity(Registrar& r);
void register_constant(Registrar& r);
void register_transpose(Registrar& r);
void register_squeeze(Registrar& r);
void register_unsqueeze(Registrar& r);
void register_reshape(Registrar& r);
void register_flatten(Registrar& r);
void register_concat(Registrar& r);
void register_split(Registrar& r);
void register_slice(Registrar& r);
void register_gather(Registrar& r);
void register_gather_elements(Registrar& r);
void register_gather_nd(Registrar& r);
void register_scatter_elements(Registrar& r);  // ScatterElements and Scatter
void register_scatter_nd(Registrar& r);
void register_shape(Registrar& r);
void register_size(Registrar& r);
void register_constant_fill(Registrar& r);
void register_constant_of_shape(Registrar& r);
void register_expand(Registrar& r);
void register_tile(Registrar& r);
void register_pad(Registrar& r);
void register_center_crop_pad(Registrar& r);
void register_range(Registrar& r);
void register_dropout(Registrar& r);
void register_one_hot(Registrar& r);
void register_top_k(Registrar& r);
void register_reverse_sequence(Registrar& r);
void register_trilu(Registrar& r);
void register_compress(Registrar& r);
void register_non_zero(Registrar& r);
void register_unique(Registrar& r);
void register_eye_like(Registrar& r);
void register_depth_to_space(Registrar& r);
void register_space_to_depth(Registrar& r);
void register_tensor_scatter(Registrar& r);
void register_bit_cast(Registrar& r);
void register_to_blocked(Registrar& r);    // recur::ToBlocked
void register_from_blocked(Registrar& r);  // recur::FromBlocked

// The output shape of Reshape for input shape `in` and shape input `spec` (shared with
// optimisation passes that fold reshapes).
Result<Shape> reshape_shape(const Shape& in, const Shape& spec, bool allowzero);

}  // namespace recur::reference
