// Registration functions of nn/.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_matmul(Registrar& r);
void register_gemm(Registrar& r);
void register_einsum(Registrar& r);
void register_conv(Registrar& r);
void register_conv_transpose(Registrar& r);
void register_col2im(Registrar& r);
void register_max_pool(Registrar& r);
void register_average_pool(Registrar& r);
void register_lp_pool(Registrar& r);
void register_global_pool(Registrar& r);  // GlobalAveragePool, GlobalMaxPool, GlobalLpPool
void register_max_unpool(Registrar& r);
void register_resize(Registrar& r);
void register_upsample(Registrar& r);
void register_batch_normalization(Registrar& r);
void register_layer_normalization(Registrar& r);
void register_rms_normalization(Registrar& r);
void register_rotary_embedding(Registrar& r);
void register_instance_normalization(Registrar& r);
void register_group_normalization(Registrar& r);
void register_lrn(Registrar& r);
void register_image_scaler(Registrar& r);
void register_crop(Registrar& r);
void register_mean_variance_normalization(Registrar& r);
void register_lp_normalization(Registrar& r);
void register_grid_sample(Registrar& r);
void register_affine_grid(Registrar& r);
void register_deform_conv(Registrar& r);
void register_roi_align(Registrar& r);
void register_max_roi_pool(Registrar& r);
void register_non_max_suppression(Registrar& r);
void register_negative_log_likelihood_loss(Registrar& r);
void register_softmax_cross_entropy_loss(Registrar& r);
void register_attention(Registrar& r);

}  // namespace recur::reference
