#include <cuda_fp16.h>

#include <algorithm>
#include <climits>

#include "providers/cuda/rnn/generic_rnn_kernels.h"
#include "providers/cuda/rnn/generic_rnn_plan.h"

namespace recur::cuda {

namespace cell {
// __half has no static_cast from double-free arithmetic: storage goes through float.
template <>
__host__ __device__ inline __half to_storage<__half, float>(float v) {
  return __float2half_rn(v);
}
}  // namespace cell

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(b, 1), 65535 * 16));
}

#define RECUR_GRID_STRIDE(i, n)                                                          \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <class T, class C>
__global__ void init_kernel(cell::CellParams p, const T* h0, const T* c0, C* h, C* c) {
  RECUR_GRID_STRIDE(e, p.D * p.N * p.H) { cell::init_element<T, C>(p, h0, c0, h, c, e); }
}

template <class T, class C>
__global__ void step_kernel(cell::CellParams p, cell::StepBuffers<T, C> b, int64_t s, int phase) {
  RECUR_GRID_STRIDE(e, p.D * p.N * p.H) { step_element<T, C>(p, b, s, phase, e); }
}

// One block per (direction, batch row); the rows of a recurrence are independent, so a block
// needs nothing from the others and __syncthreads orders the phases of each step.
// Launched with up to kMaxPersistentThreads threads: the bound makes the compiler keep the
// registers within what a block that size may have (64 a thread), where an unbounded kernel
// that grew past them would fail to launch at large H.
constexpr int kMaxPersistentThreads = 1024;

template <class T, class C>
__global__ void __launch_bounds__(kMaxPersistentThreads)
    persistent_kernel(cell::CellParams p, cell::StepBuffers<T, C> b, const C* r) {
  const int64_t row = blockIdx.x;
  const int64_t H = p.H, GH = p.gates() * H;
  const bool gru0 = p.cell == cell::kGru && !p.linear_before_reset;
  for (int64_t s = 0; s < p.T; ++s) {
    for (int64_t k = threadIdx.x; k < (gru0 ? 2 * H : GH); k += blockDim.x) {
      persistent_rg<T, C>(p, b, r, row, k, false);
    }
    __syncthreads();
    for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
      step_element<T, C>(p, b, s, 0, row * H + j);
    __syncthreads();
    if (!gru0) continue;
    for (int64_t k = threadIdx.x; k < H; k += blockDim.x)
      persistent_rg<T, C>(p, b, r, row, k, true);
    __syncthreads();
    for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
      step_element<T, C>(p, b, s, 1, row * H + j);
    __syncthreads();
  }
}

template <class T, class C>
__global__ void final_kernel(cell::CellParams p, const int32_t* lens, const C* h, const C* c, T* yh,
                             T* yc) {
  RECUR_GRID_STRIDE(e, p.D * p.N * p.H) { cell::final_element<T, C>(p, lens, h, c, yh, yc, e); }
}

template <class T, class C>
__global__ void pack_bias_kernel(cell::CellParams p, const T* b, C* bias, C* rbh) {
  RECUR_GRID_STRIDE(e, p.D * p.gates() * p.H) { cell::pack_bias_element<T, C>(p, b, bias, rbh, e); }
}

__global__ void check_lengths_kernel(const int32_t* lens, int64_t N, int64_t T, int32_t* flag,
                                     int32_t site) {
  RECUR_GRID_STRIDE(n, N) {
    if (lens[n] < 0 || lens[n] > T) atomicCAS(flag, 0, site);
  }
}

template <class T, class C>
__global__ void convert_kernel(const T* src, C* dst, int64_t n) {
  RECUR_GRID_STRIDE(i, n) { dst[i] = static_cast<C>(src[i]); }
}

}  // namespace

template <class T, class C>
cudaError_t launch_rnn_init(const cell::CellParams& p, const T* h0, const T* c0, C* h, C* c,
                            cudaStream_t stream) {
  const int64_t n = p.D * p.N * p.H;
  if (n == 0) return cudaSuccess;
  init_kernel<T, C><<<blocks_for(n), kThreads, 0, stream>>>(p, h0, c0, h, c);
  return cudaGetLastError();
}

template <class T, class C>
cudaError_t launch_rnn_step(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, int64_t s,
                            int phase, cudaStream_t stream) {
  const int64_t n = p.D * p.N * p.H;
  if (n == 0) return cudaSuccess;
  step_kernel<T, C><<<blocks_for(n), kThreads, 0, stream>>>(p, b, s, phase);
  return cudaGetLastError();
}

template <class T, class C>
cudaError_t launch_rnn_persistent(const cell::CellParams& p, const cell::StepBuffers<T, C>& b,
                                  const C* r, cudaStream_t stream) {
  const int64_t rows = p.D * p.N;
  if (rows == 0 || p.T == 0) return cudaSuccess;
  if (rows > INT32_MAX) return cudaErrorInvalidValue;
  const int64_t GH = p.gates() * p.H;
  const int threads = static_cast<int>(
      std::min<int64_t>(kMaxPersistentThreads, std::max<int64_t>(32, (GH + 31) / 32 * 32)));
  persistent_kernel<T, C><<<static_cast<unsigned>(rows), threads, 0, stream>>>(p, b, r);
  return cudaGetLastError();
}

template <class T, class C>
cudaError_t launch_rnn_final(const cell::CellParams& p, const int32_t* lens, const C* h, const C* c,
                             T* yh, T* yc, cudaStream_t stream) {
  const int64_t n = p.D * p.N * p.H;
  if (n == 0 || (!yh && !yc)) return cudaSuccess;
  final_kernel<T, C><<<blocks_for(n), kThreads, 0, stream>>>(p, lens, h, c, yh, yc);
  return cudaGetLastError();
}

template <class T, class C>
cudaError_t launch_rnn_pack_bias(const cell::CellParams& p, const T* b, C* bias, C* rbh,
                                 cudaStream_t stream) {
  const int64_t n = p.D * p.gates() * p.H;
  if (n == 0) return cudaSuccess;
  pack_bias_kernel<T, C><<<blocks_for(n), kThreads, 0, stream>>>(p, b, bias, rbh);
  return cudaGetLastError();
}

cudaError_t launch_rnn_check_lengths(const int32_t* lens, int64_t N, int64_t T, int32_t* flag,
                                     int32_t site, cudaStream_t stream) {
  if (N == 0 || !lens || !flag) return cudaSuccess;
  check_lengths_kernel<<<blocks_for(N), kThreads, 0, stream>>>(lens, N, T, flag, site);
  return cudaGetLastError();
}

template <class T, class C>
cudaError_t launch_convert(const T* src, C* dst, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  convert_kernel<T, C><<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n);
  return cudaGetLastError();
}

#define RECUR_INSTANTIATE(T, C)                                                                   \
  template cudaError_t launch_rnn_init<T, C>(const cell::CellParams&, const T*, const T*, C*, C*, \
                                             cudaStream_t);                                       \
  template cudaError_t launch_rnn_step<T, C>(                                                     \
      const cell::CellParams&, const cell::StepBuffers<T, C>&, int64_t, int, cudaStream_t);       \
  template cudaError_t launch_rnn_persistent<T, C>(                                               \
      const cell::CellParams&, const cell::StepBuffers<T, C>&, const C*, cudaStream_t);           \
  template cudaError_t launch_rnn_final<T, C>(const cell::CellParams&, const int32_t*, const C*,  \
                                              const C*, T*, T*, cudaStream_t);                    \
  template cudaError_t launch_rnn_pack_bias<T, C>(const cell::CellParams&, const T*, C*, C*,      \
                                                  cudaStream_t);                                  \
  template cudaError_t launch_convert<T, C>(const T*, C*, int64_t, cudaStream_t);

RECUR_INSTANTIATE(float, float)
RECUR_INSTANTIATE(double, double)
RECUR_INSTANTIATE(__half, float)

}  // namespace recur::cuda
