// Sin of float32 on AVX-512 (avx512::sincos16): oneDNN 2.6 has no sine. Periodic activations
// (BigVGAN's Snake, x + sin(a x)^2 / a) and positional encodings computed at run time use it.
#include "providers/onednn/kernels.h"
#include "providers/onednn/math/avx512_unary.h"

namespace recur::onednn {

void register_sin(KernelRegistry& r) { register_avx512_unary(r, "Sin", 7, avx512::Unary::kSin); }

}  // namespace recur::onednn
