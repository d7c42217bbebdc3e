// Shared by the glue .cu files: grid sizing and the grid-stride loop.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace recur::cuda::ops {

constexpr int kBlock = 256;

inline unsigned grid_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(b, 1), 65535 * 16));
}

#define RECUR_FOR_EACH(i, n)                                                             \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Launches `kernel` over n elements with the arguments, returning the launch status.
#define RECUR_LAUNCH(n, stream, kernel, ...)                                \
  do {                                                                      \
    if ((n) > 0) kernel<<<grid_for(n), kBlock, 0, (stream)>>>(__VA_ARGS__); \
  } while (0)

}  // namespace recur::cuda::ops
