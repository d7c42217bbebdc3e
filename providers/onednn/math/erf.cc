// Erf of float32 on AVX-512 (avx512::erf16, a rational approximation fitted for it): oneDNN
// 2.6 has erf only inside its GELU. What exporters leave outside a GELU pattern (a GELU
// written differently, erf-based activations of their own) lands here.
#include "providers/onednn/kernels.h"
#include "providers/onednn/math/avx512_unary.h"

namespace recur::onednn {

void register_erf(KernelRegistry& r) { register_avx512_unary(r, "Erf", 9, avx512::Unary::kErf); }

}  // namespace recur::onednn
