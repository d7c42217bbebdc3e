#include "providers/reference/kernels.h"
#include "providers/reference/nn/nn_ops.h"

namespace recur::reference {

void register_nn_kernels(Registrar& r) {
  register_matmul(r);
  register_gemm(r);
  register_einsum(r);
  register_conv(r);
  register_conv_transpose(r);
  register_col2im(r);
  register_max_pool(r);
  register_average_pool(r);
  register_lp_pool(r);
  register_global_pool(r);
  register_max_unpool(r);
  register_resize(r);
  register_upsample(r);
  register_batch_normalization(r);
  register_layer_normalization(r);
  register_instance_normalization(r);
  register_group_normalization(r);
  register_lrn(r);
  register_image_scaler(r);
  register_crop(r);
  register_mean_variance_normalization(r);
  register_lp_normalization(r);
  register_grid_sample(r);
  register_affine_grid(r);
  register_deform_conv(r);
  register_roi_align(r);
  register_max_roi_pool(r);
  register_non_max_suppression(r);
  register_negative_log_likelihood_loss(r);
  register_softmax_cross_entropy_loss(r);
  register_attention(r);
  register_rms_normalization(r);
  register_rotary_embedding(r);
}

}  // namespace recur::reference
