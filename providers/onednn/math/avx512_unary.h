// The oneDNN provider's element-wise functions that oneDNN 2.6 lacks, as one AVX-512 loop over
// the tensor (avx512::unary): Erf, Sin, Cos, HardSigmoid. They run at memory speed on one
// thread.
#pragma once

#include "providers/onednn/common/avx512.h"
#include "runtime/provider/execution_provider.h"

namespace recur::onednn {

// A float attribute of the op, given to avx512::unary as its alpha or beta, and its default.
struct UnaryAttr {
  const char* name = nullptr;  // none: the value is `fallback`
  float fallback = 0.0f;
};

// Registers `op` (since opset `since`) for float32 on processors with AVX-512.
void register_avx512_unary(KernelRegistry& r, const char* op, int since, avx512::Unary f,
                           UnaryAttr alpha = {}, UnaryAttr beta = {});

}  // namespace recur::onednn
