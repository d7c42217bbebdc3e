// Copies between a tensor [N, C, spatial...] and its channel-blocked form
// [N, C/b, spatial..., b] (runtime/graph/blocked.h), element by element: the reference
// provider's ToBlocked, FromBlocked and BlockedConv, which the oneDNN provider's are checked
// against.
#pragma once

#include <cstdint>
#include <cstring>

#include "recur/tensor.h"
#include "runtime/core/status.h"

namespace recur::reference {

// The types the blocked forms are made for (the float types convolutions take).
inline bool blockable_dtype(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 ||
         t == DType::kBFloat16;
}

// The blocked form's shape for X's `shape` (rank 3 or more, C a positive multiple of `block`),
// or an error naming `what`.
inline Result<Shape> blocked_shape(const Shape& shape, int64_t block, const std::string& what) {
  if (shape.size() < 3 || block < 1 || shape[1] % block != 0) {
    return invalid_argument(what + " " + shape_to_string(shape) +
                            " must have rank 3 or more and channels a multiple of the block " +
                            std::to_string(block));
  }
  Shape b = shape;
  b[1] = shape[1] / block;
  b.push_back(block);
  return b;
}

// The plain shape [N, C, spatial...] a blocked form `shape` holds, or an error naming `what`.
inline Result<Shape> unblocked_shape(const Shape& shape, const std::string& what) {
  if (shape.size() < 4) {
    return invalid_argument(what + " " + shape_to_string(shape) +
                            " must have rank 4 or more: [N, C/block, spatial..., block]");
  }
  Shape p(shape.begin(), shape.end() - 1);
  p[1] = shape[1] * shape.back();
  return p;
}

// `plain` [N, C, S] <-> `blocked` [N, C/b, S, b], elements of `size` bytes.
inline void copy_channel_blocks(bool to_blocked, const void* from, void* to, int64_t N, int64_t C,
                                int64_t S, int64_t b, size_t size) {
  const auto* src = static_cast<const unsigned char*>(from);
  auto* dst = static_cast<unsigned char*>(to);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t p = (n * C + c) * S + s;
        const int64_t q = ((n * (C / b) + c / b) * S + s) * b + c % b;
        std::memcpy(dst + size * static_cast<size_t>(to_blocked ? q : p),
                    src + size * static_cast<size_t>(to_blocked ? p : q), size);
      }
}

}  // namespace recur::reference
