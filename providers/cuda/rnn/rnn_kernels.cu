#include <algorithm>

#include "providers/cuda/rnn/rnn_index.h"
#include "providers/cuda/rnn/rnn_kernels.h"

namespace recur::cuda {

namespace {

namespace ix = rnn_index;

// Lengths for up to kLensPerLaunch batches, passed by value: kernel arguments stay under the
// 4 KiB that every architecture accepts.
constexpr int kLensPerLaunch = 1000;
struct LenChunk {
  int32_t n0;
  int32_t count;
  int32_t len[kLensPerLaunch];
};

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(b, 1), 65535 * 8));
}

// One thread per element of the chunk's rows; grid-stride.
template <class W>
__global__ void reverse_kernel(const W* src, W* dst, int layout, int64_t T, int64_t N, int64_t V,
                               LenChunk chunk) {
  const int64_t total = static_cast<int64_t>(chunk.count) * T * V;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t v = i % V;
    const int64_t t = (i / V) % T;
    const int64_t k = i / (V * T);
    const int64_t n = chunk.n0 + k;
    const int64_t s = ix::reversed_step(t, chunk.len[k]);
    const int64_t d = ix::row(layout, t, n, T, N) * V + v;
    dst[d] = s < 0 ? W(0) : src[ix::row(layout, s, n, T, N) * V + v];
  }
}

template <class W>
__global__ void bidir_kernel(const W* src, W* dst, int64_t total, int64_t N, int64_t H) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[ix::bidir_source(i, N, H)];
  }
}

template <class W>
__global__ void transpose_kernel(const W* src, W* dst, int64_t total, int64_t A, int64_t B,
                                 int64_t H) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[ix::transpose_source(i, A, B, H)];
  }
}

template <class W>
__global__ void mask_kernel(W* y, int64_t total, int layout, int64_t T, int64_t D, int64_t N,
                            int64_t H, LenChunk chunk) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t t = 0, n = 0;
    ix::y_step_batch(i, layout, T, D, N, H, &t, &n);
    const int64_t k = n - chunk.n0;
    if (k >= 0 && k < chunk.count && t >= chunk.len[k]) y[i] = W(0);
  }
}

template <class F>
cudaError_t for_each_chunk(int64_t N, const int32_t* lens, F&& f) {
  for (int64_t n0 = 0; n0 < N; n0 += kLensPerLaunch) {
    LenChunk c;
    c.n0 = static_cast<int32_t>(n0);
    c.count = static_cast<int32_t>(std::min<int64_t>(kLensPerLaunch, N - n0));
    for (int k = 0; k < c.count; ++k) c.len[k] = lens[n0 + k];
    f(c);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t launch_reverse_sequences(const void* src, void* dst, size_t elem_size, int layout,
                                     int64_t T, int64_t N, int64_t V, const int32_t* lens,
                                     cudaStream_t stream) {
  if (elem_size != 2 && elem_size != 4) return cudaErrorInvalidValue;  // half and float only
  return for_each_chunk(N, lens, [&](const LenChunk& c) {
    const unsigned blocks = blocks_for(static_cast<int64_t>(c.count) * T * V);
    if (elem_size == 2) {
      reverse_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), layout, T, N, V, c);
    } else {
      reverse_kernel<<<blocks, kThreads, 0, stream>>>(
          static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), layout, T, N, V, c);
    }
  });
}

cudaError_t launch_bidir_to_onnx(const void* src, void* dst, size_t elem_size, int64_t T, int64_t N,
                                 int64_t H, cudaStream_t stream) {
  const int64_t total = T * 2 * N * H;
  if (total == 0) return cudaSuccess;
  if (elem_size != 2 && elem_size != 4) return cudaErrorInvalidValue;  // half and float only
  if (elem_size == 2) {
    bidir_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), total, N, H);
  } else {
    bidir_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), total, N, H);
  }
  return cudaGetLastError();
}

cudaError_t launch_transpose_states(const void* src, void* dst, size_t elem_size, int64_t A,
                                    int64_t B, int64_t H, cudaStream_t stream) {
  const int64_t total = A * B * H;
  if (total == 0) return cudaSuccess;
  if (elem_size != 2 && elem_size != 4) return cudaErrorInvalidValue;  // half and float only
  if (elem_size == 2) {
    transpose_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), total, A, B, H);
  } else {
    transpose_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), total, A, B, H);
  }
  return cudaGetLastError();
}

cudaError_t launch_mask_y(void* y, size_t elem_size, int layout, int64_t T, int64_t D, int64_t N,
                          int64_t H, const int32_t* lens, cudaStream_t stream) {
  const int64_t total = T * D * N * H;
  if (total == 0) return cudaSuccess;
  if (elem_size != 2 && elem_size != 4) return cudaErrorInvalidValue;  // half and float only
  return for_each_chunk(N, lens, [&](const LenChunk& c) {
    if (elem_size == 2) {
      mask_kernel<<<blocks_for(total), kThreads, 0, stream>>>(static_cast<uint16_t*>(y), total,
                                                              layout, T, D, N, H, c);
    } else {
      mask_kernel<<<blocks_for(total), kThreads, 0, stream>>>(static_cast<uint32_t*>(y), total,
                                                              layout, T, D, N, H, c);
    }
  });
}

}  // namespace recur::cuda
