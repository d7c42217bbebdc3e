#include <cooperative_groups.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

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

// --- The grid kernel (GridShape in generic_rnn_plan.h) ----------------------------------------

// Four consecutive values of shared memory, 16-byte aligned (float) or 32 (double).
__device__ inline void load4(const float* p, float (&v)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}
__device__ inline void load4(const double* p, double (&v)[4]) {
  const double2 a = *reinterpret_cast<const double2*>(p);
  const double2 b = *reinterpret_cast<const double2*>(p + 2);
  v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
}

// Rows [n0, n0 + rows) of direction d of the state src [D][N][H], written by every block, into
// shared memory at a row stride of hp. Read past L1, which another multiprocessor's writes do
// not update. Every load of a thread is issued before the first store, so the L2 latency is
// paid once or twice per step rather than once per row.
template <class C>
__device__ void grid_stage(const cell::CellParams& p, const GridShape& g, const C* src, int64_t d,
                           int64_t n0, int rows, C* hs) {
  constexpr int kInFlight = 16;
  const int tid = threadIdx.x;
  const int H = static_cast<int>(p.H), hp = static_cast<int>(g.hp);
  const C* base = src + (d * p.N + n0) * p.H;
  if constexpr (std::is_same_v<C, float>) {
    if (H == hp) {  // rows are contiguous on both sides, 16-byte aligned: one flat copy
      const float4* s4 = reinterpret_cast<const float4*>(base);
      float4* d4 = reinterpret_cast<float4*>(hs);
      const int n4 = rows * (H / 4);
      for (int i0 = tid; i0 < n4; i0 += kInFlight * kGridThreads) {
        float4 v[kInFlight];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
          const int i = i0 + u * kGridThreads;
          if (i < n4) v[u] = __ldcg(s4 + i);
        }
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
          const int i = i0 + u * kGridThreads;
          if (i < n4) d4[i] = v[u];
        }
      }
      return;
    }
  }
  const int n = rows * hp;
  for (int i0 = tid; i0 < n; i0 += kInFlight * kGridThreads) {
    C v[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int i = i0 + u * kGridThreads, r = i / hp, k = i - r * hp;
      v[u] = i < n && k < H ? __ldcg(base + static_cast<int64_t>(r) * H + k) : C(0);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int i = i0 + u * kGridThreads;
      if (i < n) hs[i] = v[u];
    }
  }
}

// One batch of kGridRowBatch staged rows (`full`: all of them exist, no row is tested): this
// thread's products, KC/4 four-term groups per row, with every shared-memory address a row
// base plus a constant. nvalid: the terms this thread's chunk has (a multiple of 4).
template <class C, int KC, bool kFull>
__device__ void grid_batch(const C* hb, int hp, int nvalid, int rows, const C (&w)[KC],
                           C (&acc)[kGridRowBatch]) {
#pragma unroll
  for (int i = 0; i < KC; i += 4) {
    if (i < nvalid) {
      // Every row's four values first, then the rows' multiply-adds side by side: eight
      // independent chains rather than one row's four dependent ones.
      C v[kGridRowBatch][4];
#pragma unroll
      for (int rr = 0; rr < kGridRowBatch; ++rr) {
        if (kFull || rr < rows) load4(hb + rr * hp + i, v[rr]);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
#pragma unroll
        for (int rr = 0; rr < kGridRowBatch; ++rr) {
          if (kFull || rr < rows) acc[rr] = fma(v[rr][k], w[i + k], acc[rr]);
        }
      }
    }
  }
}

// Columns `phase` of this block's H R^T from src (the state, or aux): rows staged
// g.rows_staged at a time; each thread's products per row (w: its terms of this phase's
// column), then the chunks' sums per (row, column) in chunk order.
template <class C, int KC>
__device__ void grid_product(const cell::CellParams& p, const GridShape& g, const GridTile& t,
                             const C* src, C* rg, C* hs, C* red, const C (&w)[KC], int phase) {
  const int tid = threadIdx.x;
  const int64_t N = p.N, rg_row = p.gates() * g.units;
  const int hp = static_cast<int>(g.hp), cols = static_cast<int>(g.cols[phase]);
  const int kc = static_cast<int>(g.kc[phase]), chunks = static_cast<int>(g.chunks[phase]);
  const int c = tid % cols, q = tid / cols;
  const int used = static_cast<int>((p.H + kc - 1) / kc);  // chunks with terms
  const bool mine = q < used && grid_col(p, g, t, c, phase) >= 0;
  const int nvalid = mine ? min(kc, hp - q * kc) : 0;
  // Where a warp holds whole groups of cols lanes (cols a power of two up to 16), its lanes'
  // sums are combined before shared memory: one partial per warp and column instead of one per
  // chunk.
  const bool shuffled = cols <= 16 && (cols & (cols - 1)) == 0;
  const int parts = shuffled ? kGridThreads / 32 : used;
  for (int64_t n0 = 0; n0 < N; n0 += g.rows_staged) {
    const int rows = static_cast<int>(N - n0 < g.rows_staged ? N - n0 : g.rows_staged);
    grid_stage<C>(p, g, src, t.d, n0, rows, hs);
    __syncthreads();
    for (int r0 = 0; r0 < rows; r0 += kGridRowBatch) {
      C acc[kGridRowBatch];
#pragma unroll
      for (int rr = 0; rr < kGridRowBatch; ++rr) acc[rr] = C(0);
      const C* hb = hs + r0 * hp + q * kc;
      if (rows - r0 >= kGridRowBatch) {
        grid_batch<C, KC, true>(hb, hp, nvalid, kGridRowBatch, w, acc);
      } else {
        grid_batch<C, KC, false>(hb, hp, nvalid, rows - r0, w, acc);
      }
      if (shuffled) {
        // A warp's lanes c, c + cols, ... share column c: their sums meet by shuffles, and
        // lane c writes the warp's partial.
        for (int off = cols; off < 32; off <<= 1) {
#pragma unroll
          for (int rr = 0; rr < kGridRowBatch; ++rr)  // eight shuffles in flight, not one
            acc[rr] += __shfl_xor_sync(0xffffffffu, acc[rr], off);
        }
        if ((tid & 31) < cols) {
#pragma unroll
          for (int rr = 0; rr < kGridRowBatch; ++rr)
            red[((tid >> 5) * kGridRowBatch + rr) * cols + c] = acc[rr];
        }
      } else if (q < chunks) {
#pragma unroll
        for (int rr = 0; rr < kGridRowBatch; ++rr)
          red[(q * kGridRowBatch + rr) * cols + c] = acc[rr];
      }
      __syncthreads();
      for (int o = tid; o < kGridRowBatch * cols; o += kGridThreads) {
        const int rr = o / cols, cc = o - rr * cols;
        const int64_t slot = grid_slot(p, g, t, cc, phase);
        if (slot < 0 || r0 + rr >= rows) continue;
        C sum(0);
        for (int qq = 0; qq < parts; ++qq) sum += red[(qq * kGridRowBatch + rr) * cols + cc];
        rg[(n0 + r0 + rr) * rg_row + slot] = sum;
      }
      __syncthreads();
    }
  }
}

// This thread's terms of its column in `phase`, for the whole run (zeros where it has none).
template <class C, int KC>
__device__ void grid_weights(const cell::CellParams& p, const GridShape& g, const GridTile& t,
                             const C* __restrict__ r, int phase, C (&w)[KC]) {
  const int cols = static_cast<int>(g.cols[phase]);
  const int c = threadIdx.x % cols, q = threadIdx.x / cols;
  const int64_t col = grid_col(p, g, t, c, phase), kc = g.kc[phase];
  const C* row = r + (t.d * p.gates() * p.H + col) * p.H;
#pragma unroll
  for (int i = 0; i < KC; ++i) {
    const int64_t k = q * kc + i;
    w[i] = (q < g.chunks[phase] && col >= 0 && i < kc && k < p.H) ? row[k] : C(0);
  }
}

// Every step of the recurrence in one cooperative launch of g.blocks blocks of kGridThreads.
// The operations and their order are HostRnnBackend::grid's (generic_rnn_plan.h). kTwo: the
// two phases of a GRU with linear_before_reset=0, each with its own terms in registers.
template <class T, class C, int KC, bool kTwo>
__global__ void __launch_bounds__(kGridThreads, 1)
    grid_kernel(cell::CellParams p, cell::StepBuffers<T, C> b, const C* __restrict__ r, C* h2,
                GridShape g) {
  extern __shared__ __align__(16) unsigned char grid_smem[];
  C* hs = reinterpret_cast<C*>(grid_smem);
  C* red = hs + g.rows_staged * g.hp;
  C* rg = red + kGridThreads * kGridRowBatch;  // the block's own [N][G][units] of H R^T
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int tid = threadIdx.x;
  const int64_t H = p.H;
  const GridTile t = grid_tile(g, blockIdx.x);
  C w0[KC];
  grid_weights<C, KC>(p, g, t, r, 0, w0);
  C w1[kTwo ? KC : 1];
  if constexpr (kTwo) grid_weights<C, KC>(p, g, t, r, 1, w1);
  const int mine = static_cast<int>(p.N * g.units);  // the block's elements
  cell::Dnj first;  // this thread's first element, whose inputs are prefetched
  const bool prefetch = tid < mine && grid_element(g, t, H, tid, &first);
  const int64_t first_len = prefetch ? cell::seq_len(b.lens, first.n, p.T) : 0;
  for (int64_t s = 0; s < p.T; ++s) {
    const C* cur = (s & 1) ? h2 : b.h;
    const cell::StepBuffers<T, C> nb = grid_buffers(p, g, t, b, (s & 1) ? b.h : h2, rg);
    if (prefetch && s < first_len) {
      // The cell's inputs that no block writes during the step (its projection of X, and the
      // cell state) come to L1 while the product runs, rather than from L2 or memory after it.
      const int64_t time = cell::step_time(p, first.d, s, first_len);
      const C* xw =
          b.xw + (first.d * p.T * p.N + cell::x_row(p, time, first.n)) * p.gates() * H + first.j;
      for (int64_t gate = 0; gate < p.gates(); ++gate)
        asm volatile("prefetch.L1 [%0];" ::"l"(xw + gate * H));
      if (b.c) asm volatile("prefetch.L1 [%0];" ::"l"(b.c + state_index(p, first)));
    }
    cell::Dnj at;
    // Rows past their length keep their state: every element starts as H_{t-1}.
    for (int i = tid; i < mine; i += kGridThreads) {
      if (grid_element(g, t, H, i, &at)) nb.h[state_index(p, at)] = cur[state_index(p, at)];
    }
    grid_product<C, KC>(p, g, t, cur, rg, hs, red, w0, 0);
    for (int i = tid; i < mine; i += kGridThreads) {
      if (grid_element(g, t, H, i, &at)) step_element<T, C>(p, nb, s, 0, at);
    }
    if constexpr (kTwo) {
      grid.sync();  // r*H_{t-1} (aux) from every block
      grid_product<C, KC>(p, g, t, b.aux, rg, hs, red, w1, 1);
      for (int i = tid; i < mine; i += kGridThreads) {
        if (grid_element(g, t, H, i, &at)) step_element<T, C>(p, nb, s, 1, at);
      }
    }
    grid.sync();
  }
  if (p.T % 2 == 1) {  // the last state is in h2: each block moves its own elements
    cell::Dnj at;
    for (int i = tid; i < mine; i += kGridThreads) {
      if (grid_element(g, t, H, i, &at)) b.h[state_index(p, at)] = h2[state_index(p, at)];
    }
  }
}

template <class T, class C, int KC, bool kTwo>
cudaError_t launch_grid_kc(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r,
                           C* h2, const GridShape& g, cudaStream_t stream, bool dry) {
  const void* fn = reinterpret_cast<const void*>(&grid_kernel<T, C, KC, kTwo>);
  const size_t smem = static_cast<size_t>(g.smem_bytes);
  int device = 0, sms = 0, optin = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  // The device's whole allowance rather than this launch's size: runs of other shapes on other
  // threads set the same value, so none can shrink it under another's launch.
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  if (e != cudaSuccess) return e;
  int per_sm = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, kGridThreads, smem);
  if (e != cudaSuccess) return e;
  if (static_cast<int64_t>(per_sm) * sms < g.blocks) return cudaErrorCooperativeLaunchTooLarge;
  if (dry) return cudaSuccess;
  cell::CellParams pa = p;
  cell::StepBuffers<T, C> ba = b;
  const C* ra = r;
  C* h2a = h2;
  GridShape ga = g;
  void* args[] = {&pa, &ba, &ra, &h2a, &ga};
  return cudaLaunchCooperativeKernel(fn, dim3(static_cast<unsigned>(g.blocks)), dim3(kGridThreads),
                                     args, smem, stream);
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

template <class T, class C, bool kTwo>
cudaError_t launch_grid_two(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r,
                            C* h2, const GridShape& g, cudaStream_t stream, bool dry) {
  constexpr int64_t kMax = grid_max_kc(sizeof(C), kTwo ? 2 : 1);
  const int64_t kc = g.max_kc();
  if (kc <= 8) return launch_grid_kc<T, C, 8, kTwo>(p, b, r, h2, g, stream, dry);
  if (kc <= 16) return launch_grid_kc<T, C, 16, kTwo>(p, b, r, h2, g, stream, dry);
  if constexpr (kMax >= 32) {
    if (kc <= 32) return launch_grid_kc<T, C, 32, kTwo>(p, b, r, h2, g, stream, dry);
  }
  if constexpr (kMax >= 64) {
    if (kc <= 64) return launch_grid_kc<T, C, 64, kTwo>(p, b, r, h2, g, stream, dry);
  }
  return cudaErrorInvalidValue;
}

template <class T, class C>
cudaError_t launch_rnn_grid(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r,
                            C* h2, const GridShape& g, cudaStream_t stream, bool dry) {
  if (!g.ok() || g.max_kc() > grid_max_kc(sizeof(C), g.phases)) return cudaErrorInvalidValue;
  if (!dry && (p.T == 0 || p.N == 0)) return cudaSuccess;
  return g.phases == 2 ? launch_grid_two<T, C, true>(p, b, r, h2, g, stream, dry)
                       : launch_grid_two<T, C, false>(p, b, r, h2, g, stream, dry);
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
  template cudaError_t launch_rnn_grid<T, C>(const cell::CellParams&,                             \
                                             const cell::StepBuffers<T, C>&, const C*, C*,        \
                                             const GridShape&, cudaStream_t, bool);               \
  template cudaError_t launch_rnn_final<T, C>(const cell::CellParams&, const int32_t*, const C*,  \
                                              const C*, T*, T*, cudaStream_t);                    \
  template cudaError_t launch_rnn_pack_bias<T, C>(const cell::CellParams&, const T*, C*, C*,      \
                                                  cudaStream_t);                                  \
  template cudaError_t launch_convert<T, C>(const T*, C*, int64_t, cudaStream_t);

RECUR_INSTANTIATE(float, float)
RECUR_INSTANTIATE(double, double)
RECUR_INSTANTIATE(__half, float)

}  // namespace recur::cuda
