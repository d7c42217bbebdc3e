#include "providers/reference/kernels.h"
#include "providers/reference/tensor/tensor_ops.h"

namespace recur::reference {

void register_tensor_kernels(Registrar& r) {
  register_identity(r);
  register_constant(r);
  register_transpose(r);
  register_squeeze(r);
  register_unsqueeze(r);
  register_reshape(r);
  register_flatten(r);
  register_concat(r);
  register_split(r);
  register_slice(r);
  register_gather(r);
  register_gather_elements(r);
  register_gather_nd(r);
  register_scatter_elements(r);
  register_scatter_nd(r);
  register_shape(r);
  register_size(r);
  register_constant_fill(r);
  register_constant_of_shape(r);
  register_expand(r);
  register_tile(r);
  register_pad(r);
  register_center_crop_pad(r);
  register_range(r);
  register_dropout(r);
  register_one_hot(r);
  register_top_k(r);
  register_reverse_sequence(r);
  register_trilu(r);
  register_compress(r);
  register_non_zero(r);
  register_unique(r);
  register_eye_like(r);
  register_depth_to_space(r);
  register_space_to_depth(r);
  register_tensor_scatter(r);
  register_bit_cast(r);
  register_to_blocked(r);
  register_from_blocked(r);
}

}  // namespace recur::reference
