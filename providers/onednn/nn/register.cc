#include "providers/onednn/kernels.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

void register_nn_kernels(KernelRegistry& r) {
  register_matmul(r);
  register_gemm(r);
  register_conv(r);
  register_batch_normalization(r);
  register_conv_transpose(r);
  register_einsum(r);
  register_layer_normalization(r);
  register_pooling(r);
  register_resize(r);
  register_softmax(r);
}

}  // namespace recur::onednn
