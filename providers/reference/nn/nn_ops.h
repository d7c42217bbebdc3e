// Registration functions of nn/.
#pragma once

#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_matmul(KernelRegistry& r);
void register_gemm(KernelRegistry& r);
void register_einsum(KernelRegistry& r);
void register_conv(KernelRegistry& r);
void register_conv_transpose(KernelRegistry& r);
void register_max_pool(KernelRegistry& r);
void register_average_pool(KernelRegistry& r);
void register_lp_pool(KernelRegistry& r);
void register_global_pool(KernelRegistry& r);  // GlobalAveragePool, GlobalMaxPool, GlobalLpPool
void register_max_unpool(KernelRegistry& r);
void register_resize(KernelRegistry& r);
void register_upsample(KernelRegistry& r);
void register_batch_normalization(KernelRegistry& r);
void register_layer_normalization(KernelRegistry& r);
void register_instance_normalization(KernelRegistry& r);
void register_lrn(KernelRegistry& r);
void register_mean_variance_normalization(KernelRegistry& r);
void register_lp_normalization(KernelRegistry& r);
void register_grid_sample(KernelRegistry& r);
void register_roi_align(KernelRegistry& r);
void register_non_max_suppression(KernelRegistry& r);
void register_negative_log_likelihood_loss(KernelRegistry& r);
void register_softmax_cross_entropy_loss(KernelRegistry& r);

}  // namespace recur::reference
