// memcpy for a size that may be 0. memcpy's pointers must be valid even for 0 bytes, and the
// data pointer of an empty tensor, or data() of an empty vector, may be null: UBSan reports
// such a call (the model fuzzer found one in ConvInteger with an empty output).
#pragma once

#include <cstddef>
#include <cstring>

namespace recur {

inline void copy_bytes(void* dst, const void* src, size_t n) {
  if (n != 0) std::memcpy(dst, src, n);
}

}  // namespace recur
