// Cos of float32 on AVX-512 (avx512::sincos16 a quarter period on): oneDNN 2.6 has no cosine.
#include "providers/onednn/kernels.h"
#include "providers/onednn/math/avx512_unary.h"

namespace recur::onednn {

void register_cos(KernelRegistry& r) { register_avx512_unary(r, "Cos", 7, avx512::Unary::kCos); }

}  // namespace recur::onednn
