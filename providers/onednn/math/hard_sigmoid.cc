// HardSigmoid of float32 on AVX-512: oneDNN 2.6 has no such eltwise. MobileNetV3-style front
// ends gate every squeeze-and-excitation block with one, and exporters before opset 14 write
// each HardSwish with one (runtime/engine/optimize/fuse_swish.cc folds those back).
#include "providers/onednn/kernels.h"
#include "providers/onednn/math/avx512_unary.h"

namespace recur::onednn {

void register_hard_sigmoid(KernelRegistry& r) {
  register_avx512_unary(r, "HardSigmoid", 6, avx512::Unary::kHardSigmoid, {"alpha", 0.2f},
                        {"beta", 0.5f});
}

}  // namespace recur::onednn
