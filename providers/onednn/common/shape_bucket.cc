#include "providers/onednn/common/shape_bucket.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace recur::onednn {

int64_t bucket_size(int64_t n) {
  if (n < 32) return n;
  const int64_t step = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(n))) / 16;
  return (n + step - 1) / step * step;
}

void copy_window(const float* from, std::span<const int64_t> from_dims, float* to,
                 std::span<const int64_t> to_dims, int64_t inner) {
  const size_t rank = to_dims.size();
  if (rank == 0) return;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= to_dims[i];
  const int64_t to_row = to_dims[rank - 1] * inner, from_row = from_dims[rank - 1] * inner;
  const int64_t kept = std::min(to_row, from_row);
  // The index of `to`'s row r in every axis but the last, and `from`'s row at that index.
  std::vector<int64_t> idx(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    float* dst = to + r * to_row;
    bool inside = true;
    int64_t src_row = 0;
    for (size_t i = 0; i + 1 < rank; ++i) {
      inside = inside && idx[i] < from_dims[i];
      src_row = src_row * from_dims[i] + idx[i];
    }
    if (inside) {
      std::memcpy(dst, from + src_row * from_row, static_cast<size_t>(kept) * sizeof(float));
      std::fill(dst + kept, dst + to_row, 0.0f);
    } else {
      std::fill(dst, dst + to_row, 0.0f);
    }
    for (size_t i = rank - 1; i-- > 0;) {
      if (++idx[i] < to_dims[i]) break;
      idx[i] = 0;
    }
  }
}

}  // namespace recur::onednn
