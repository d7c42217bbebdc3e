// The cuda-generic RNN's sequence of operations, over a backend: one GEMM for the input
// projection of every step and direction, then per step a GEMM for the recurrent part and the
// fused gate kernel (GRU with linear_before_reset=0: two of each). The CUDA kernel's backend
// uses cuBLAS and the kernels of generic_rnn_kernels.cu; HostRnnBackend runs the same cell
// functions (generic_cell.h) in loops, so the CPU tests check this exact sequence and math.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "providers/cuda/rnn/generic_cell.h"
#include "runtime/core/status.h"

namespace recur::cuda {

// The one-launch ("grid") kernel's division of the work. The steps of a recurrence depend on
// each other, so the whole GPU works on each step in turn: block b owns `units` hidden units
// of one direction, holds their rows of R (every gate) in registers, and per step stages
// H_{t-1} in shared memory, computes its columns of H_{t-1} R^T and runs the cell on its own
// elements; a grid-wide barrier ends the step. A GRU with linear_before_reset=0 takes two
// phases per step, with a barrier between them: z and r from H_{t-1}, then the h gate from
// r*H_{t-1} (aux), which every block contributes to. The states are double-buffered, so that a
// block writing H_t never races another still reading H_{t-1}. In phase f, thread t of a block
// works on column t % cols[f] and sums the products of chunk t / cols[f] (kc[f] of the H
// terms); the chunks' partial sums meet in shared memory.
constexpr int kGridThreads = 256;  // per block
constexpr int kGridRowBatch = 8;   // rows of H_{t-1} a thread accumulates at once

// Where the grid kernel stops paying by default (cuda-generic.persistent=auto): each block then
// sums more rows per step than its eight warps hide the latency of, where cuBLAS spreads them
// over the whole GPU. A guess between the measured N = 32 and the GEMM-bound shapes, until
// measured (docs/gpu-results.md).
constexpr int64_t kGridAutoBatch = 64;

// Terms a thread holds in registers, per phase: beyond these the kernel spills (float64 holds
// half as many, and two phases hold two sets).
constexpr int64_t grid_max_kc(int64_t c_size, int64_t phases) {
  return (c_size > 4 ? 32 : 64) / (phases == 2 ? 2 : 1);
}

struct GridShape {
  int64_t units = 0;  // hidden units per block
  int64_t tiles = 0;  // blocks per direction: ceil(H / units)
  int64_t blocks = 0;
  int64_t phases = 0;       // 2 for a GRU with linear_before_reset=0, else 1
  int64_t cols[2] = {};     // the block's columns of H R^T in each phase
  int64_t chunks[2] = {};   // threads per column: kGridThreads / cols
  int64_t kc[2] = {};       // terms per chunk: a multiple of 4, at most grid_max_kc
  int64_t hp = 0;           // H rounded up to a multiple of 4: a staged row's stride
  int64_t rows_staged = 0;  // rows of H_{t-1} in shared memory at once
  int64_t smem_bytes = 0;
  int64_t max_kc() const { return std::max(kc[0], kc[1]); }
  bool ok() const { return blocks > 0; }
};

// The shape for `max_blocks` co-resident blocks and `smem_limit` bytes of shared memory per
// block, with c_size-byte compute values; !ok() (and `why`) where the kernel cannot take it.
inline GridShape grid_shape(const cell::CellParams& p, int64_t max_blocks, int64_t smem_limit,
                            int64_t c_size, std::string* why) {
  GridShape g;
  auto fail = [&](std::string w) {
    if (why) *why = std::move(w);
    return GridShape{};
  };
  if (p.H <= 0 || p.N <= 0) return fail("an empty recurrence");
  const int64_t most_tiles = max_blocks / p.D;  // per direction
  if (most_tiles < 1) return fail("fewer blocks than directions");
  const int64_t G = p.gates();
  g.units = (p.H + most_tiles - 1) / most_tiles;
  g.tiles = (p.H + g.units - 1) / g.units;
  g.blocks = p.D * g.tiles;
  const bool gru0 = p.cell == cell::kGru && !p.linear_before_reset;
  g.phases = gru0 ? 2 : 1;
  g.cols[0] = (gru0 ? 2 : G) * g.units;
  g.cols[1] = gru0 ? g.units : 0;
  for (int f = 0; f < g.phases; ++f) {
    if (g.cols[f] > kGridThreads) return fail("more columns per block than threads");
    g.chunks[f] = kGridThreads / g.cols[f];
    const int64_t per = (p.H + g.chunks[f] - 1) / g.chunks[f];
    g.kc[f] = (per + 3) / 4 * 4;
    if (g.kc[f] > grid_max_kc(c_size, g.phases)) {
      return fail("hidden_size " + std::to_string(p.H) + " needs " + std::to_string(g.kc[f]) +
                  " terms per thread on " + std::to_string(max_blocks) + " blocks (at most " +
                  std::to_string(grid_max_kc(c_size, g.phases)) + ")");
    }
  }
  g.hp = (p.H + 3) / 4 * 4;
  // Shared memory: the staged rows, the chunks' partial sums (chunks * cols <= threads) and the
  // block's own columns of H R^T for every row, which the cell reads there (rg_row).
  const int64_t red = int64_t{kGridThreads} * kGridRowBatch * c_size;
  const int64_t rg = p.N * G * g.units * c_size;
  const int64_t row = g.hp * c_size;
  g.rows_staged = std::min<int64_t>(p.N, (smem_limit - red - rg) / row);
  if (g.rows_staged < 1) return fail("a row of the state does not fit in shared memory");
  g.smem_bytes = red + rg + g.rows_staged * row;
  return g;
}

// Block b's direction and first hidden unit.
struct GridTile {
  int64_t d, j0;
};
RECUR_HD inline GridTile grid_tile(const GridShape& g, int64_t b) {
  return {b / g.tiles, (b % g.tiles) * g.units};
}

// Column c of phase `phase` of a block as a column of [G*H] (gate*H + j), or -1 past H.
// Phase 0 is every gate but the h gate of a GRU with linear_before_reset=0, which is phase 1.
RECUR_HD inline int64_t grid_col(const cell::CellParams& p, const GridShape& g, const GridTile& t,
                                 int64_t c, int phase) {
  const int64_t gate = phase == 1 ? 2 : c / g.units, j = t.j0 + c % g.units;
  return j < p.H ? gate * p.H + j : -1;
}
// The same column's place in a row of the block's own rg ([N][G][units]), or -1 past H.
RECUR_HD inline int64_t grid_slot(const cell::CellParams& p, const GridShape& g, const GridTile& t,
                                  int64_t c, int phase) {
  const int64_t gate = phase == 1 ? 2 : c / g.units, u = c % g.units;
  return t.j0 + u < p.H ? gate * g.units + u : -1;
}
// StepBuffers for the cell of a grid block: rg is the block's own [N][G][units].
template <class T, class C>
RECUR_HD cell::StepBuffers<T, C> grid_buffers(const cell::CellParams& p, const GridShape& g,
                                              const GridTile& t, cell::StepBuffers<T, C> b, C* h,
                                              C* rg) {
  b.h = h;
  b.rg = rg;
  b.rg_row = p.gates() * g.units;
  b.rg_gate = g.units;
  b.rg_j0 = t.j0;
  b.rg_d0 = t.d;
  return b;
}

// One run's pointers (device memory on the GPU). T is the storage type of X, Y and the states;
// C the compute type.
template <class T, class C>
struct GenericRnnRun {
  cell::CellParams p;  // with T, N, H, D filled in
  int64_t I = 0;
  const C* x = nullptr;  // X in the compute type, [T*N][I] in X's order
  const C* w = nullptr;  // [D][G*H][I] (ONNX W)
  const C* r = nullptr;  // [D][G*H][H] (ONNX R)
  const C* bias = nullptr;
  const C* rbh = nullptr;
  const C* peep = nullptr;
  const int32_t* lens = nullptr;
  const T* h0 = nullptr;
  const T* c0 = nullptr;
  T* y = nullptr;
  T* yh = nullptr;
  T* yc = nullptr;
  // Scratch: xw [D][T*N][G*H], rg [D][N][G*H], h and c and aux [D][N][H].
  C* xw = nullptr;
  C* rg = nullptr;
  C* h = nullptr;
  C* c = nullptr;
  C* aux = nullptr;
  // All the steps in one cooperative launch (GridShape) instead of two launches per step;
  // h2 is the second state buffer it takes.
  GridShape grid;
  C* h2 = nullptr;

  int64_t xw_elems() const { return p.D * p.T * p.N * p.gates() * p.H; }
  int64_t rg_elems() const { return p.D * p.N * p.gates() * p.H; }
  int64_t state_elems() const { return p.D * p.N * p.H; }
};

template <class T, class C>
class GenericRnnBackend {
 public:
  virtual ~GenericRnnBackend() = default;
  // Row-major Cm[M,Nc] = A[M,K] * B[Nc,K]^T for `batch` matrices at element strides sa, sb, sc.
  virtual Status gemm_nt(int64_t M, int64_t Nc, int64_t K, const C* A, int64_t lda, int64_t sa,
                         const C* B, int64_t ldb, int64_t sb, C* Cm, int64_t ldc, int64_t sc,
                         int64_t batch) = 0;
  // cell::init_element over [D][N][H].
  virtual Status init(const cell::CellParams& p, const T* h0, const T* c0, C* h, C* c) = 0;
  // The cell's element function (lstm/gru/rnn_element) over [D][N][H] for step s.
  virtual Status step(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, int64_t s,
                      int phase) = 0;
  // Every step in one launch, as GridShape says; the last state ends in b.h.
  virtual Status grid(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r,
                      C* h2, const GridShape& g) = 0;
  // cell::final_element over [D][N][H].
  virtual Status finish(const cell::CellParams& p, const int32_t* lens, const C* h, const C* c,
                        T* yh, T* yc) = 0;
};

template <class T, class C>
Status run_generic_rnn(const GenericRnnRun<T, C>& r, GenericRnnBackend<T, C>& be) {
  const cell::CellParams& p = r.p;
  const int64_t T_ = p.T, N = p.N, H = p.H, D = p.D, GH = p.gates() * H, I = r.I;
  if (T_ * N > 0) {
    // X W^T for every (t, n) row and both directions at once.
    RECUR_RETURN_IF_ERROR(
        be.gemm_nt(T_ * N, GH, I, r.x, I, 0, r.w, I, GH * I, r.xw, GH, T_ * N * GH, D));
  }
  RECUR_RETURN_IF_ERROR(be.init(p, r.h0, r.c0, r.h, r.c));
  cell::StepBuffers<T, C> sb;
  sb.xw = r.xw;
  sb.rg = r.rg;
  sb.bias = r.bias;
  sb.rbh = r.rbh;
  sb.peep = r.peep;
  sb.h = r.h;
  sb.c = r.c;
  sb.aux = r.aux;
  sb.lens = r.lens;
  sb.y = r.y;
  const bool gru0 = p.cell == cell::kGru && !p.linear_before_reset;
  if (r.grid.ok() && T_ * N > 0) {
    RECUR_RETURN_IF_ERROR(be.grid(p, sb, r.r, r.h2, r.grid));
    return be.finish(p, r.lens, r.h, r.c, r.yh, r.yc);
  }
  for (int64_t s = 0; s < T_ && N > 0; ++s) {
    if (gru0) {
      // z and r first; the h gate's recurrent product needs r*H_{t-1}.
      RECUR_RETURN_IF_ERROR(
          be.gemm_nt(N, 2 * H, H, r.h, H, N * H, r.r, H, GH * H, r.rg, GH, N * GH, D));
      RECUR_RETURN_IF_ERROR(be.step(p, sb, s, 0));
      RECUR_RETURN_IF_ERROR(be.gemm_nt(N, H, H, r.aux, H, N * H, r.r + 2 * H * H, H, GH * H,
                                       r.rg + 2 * H, GH, N * GH, D));
      RECUR_RETURN_IF_ERROR(be.step(p, sb, s, 1));
    } else {
      RECUR_RETURN_IF_ERROR(
          be.gemm_nt(N, GH, H, r.h, H, N * H, r.r, H, GH * H, r.rg, GH, N * GH, D));
      RECUR_RETURN_IF_ERROR(be.step(p, sb, s, 0));
    }
  }
  return be.finish(p, r.lens, r.h, r.c, r.yh, r.yc);
}

// The element function of `p.cell` for one element: what one CUDA thread runs.
template <class T, class C>
RECUR_HD void step_element(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, int64_t s,
                           int phase, cell::Dnj at) {
  if (p.cell == cell::kLstm) {
    cell::lstm_element<T, C>(p, b, s, at);
  } else if (p.cell == cell::kGru) {
    cell::gru_element<T, C>(p, b, s, at, phase);
  } else {
    cell::rnn_element<T, C>(p, b, s, at);
  }
}
template <class T, class C>
RECUR_HD void step_element(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, int64_t s,
                           int phase, int64_t e) {
  step_element<T, C>(p, b, s, phase, cell::split_dnj(e, p.N, p.H));
}

// Element i of the block's own [N][units] (units j0.. of direction d) as (d, n, j); false past
// H. 32-bit: a block owns at most N * units < 2^31 elements (units <= kGridThreads).
RECUR_HD inline bool grid_element(const GridShape& g, const GridTile& t, int64_t H, int i,
                                  cell::Dnj* at) {
  const int u = static_cast<int>(g.units);
  *at = {t.d, i / u, t.j0 + i % u};
  return at->j < H;
}
// The state offset of (d, n, j) in [D][N][H].
RECUR_HD inline int64_t state_index(const cell::CellParams& p, const cell::Dnj& at) {
  return (at.d * p.N + at.n) * p.H + at.j;
}

// The same operations on the host, element by element: what the CPU tests run.
template <class T, class C>
class HostRnnBackend final : public GenericRnnBackend<T, C> {
 public:
  Status gemm_nt(int64_t M, int64_t Nc, int64_t K, const C* A, int64_t lda, int64_t sa, const C* B,
                 int64_t ldb, int64_t sb, C* Cm, int64_t ldc, int64_t sc, int64_t batch) override {
    for (int64_t q = 0; q < batch; ++q)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < Nc; ++n) {
          C acc(0);
          for (int64_t k = 0; k < K; ++k) acc += A[q * sa + m * lda + k] * B[q * sb + n * ldb + k];
          Cm[q * sc + m * ldc + n] = acc;
        }
    return ok_status();
  }
  Status init(const cell::CellParams& p, const T* h0, const T* c0, C* h, C* c) override {
    for (int64_t e = 0; e < p.D * p.N * p.H; ++e) cell::init_element<T, C>(p, h0, c0, h, c, e);
    return ok_status();
  }
  Status step(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, int64_t s,
              int phase) override {
    for (int64_t e = 0; e < p.D * p.N * p.H; ++e) step_element<T, C>(p, b, s, phase, e);
    return ok_status();
  }
  Status finish(const cell::CellParams& p, const int32_t* lens, const C* h, const C* c, T* yh,
                T* yc) override {
    for (int64_t e = 0; e < p.D * p.N * p.H; ++e)
      cell::final_element<T, C>(p, lens, h, c, yh, yc, e);
    return ok_status();
  }
  // The grid kernel's order and arithmetic: within a step the blocks touch disjoint columns
  // and elements, so they run one after the other here; the products are summed chunk by
  // chunk, as the threads' partial sums are.
  Status grid(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r, C* h2,
              const GridShape& g) override {
    const int64_t H = p.H, N = p.N, GH = p.gates() * H;
    C* bufs[2] = {b.h, h2};
    const int64_t slots = N * p.gates() * g.units;  // each block's own rg
    // NaN, as the GPU's shared memory starts as garbage: a slot read before it is written shows.
    std::vector<C> rgs(static_cast<size_t>(g.blocks * slots), std::numeric_limits<C>::quiet_NaN());
    for (int64_t s = 0; s < p.T; ++s) {
      C* cur = bufs[s & 1];
      for (int phase = 0; phase < g.phases; ++phase) {
        for (int64_t blk = 0; blk < g.blocks; ++blk) {
          const GridTile t = grid_tile(g, blk);
          C* rg = rgs.data() + blk * slots;
          const cell::StepBuffers<T, C> nb = grid_buffers(p, g, t, b, bufs[(s + 1) & 1], rg);
          cell::Dnj at;
          if (phase == 0) {
            for (int i = 0; i < N * g.units; ++i) {
              if (grid_element(g, t, H, i, &at)) nb.h[state_index(p, at)] = cur[state_index(p, at)];
            }
          }
          const C* src = phase == 0 ? cur : b.aux;
          const int64_t kc = g.kc[phase];
          for (int64_t c = 0; c < g.cols[phase]; ++c) {
            const int64_t col = grid_col(p, g, t, c, phase), slot = grid_slot(p, g, t, c, phase);
            if (col < 0) continue;
            const C* w = r + (t.d * GH + col) * H;
            for (int64_t n = 0; n < N; ++n) {
              const C* x = src + (t.d * N + n) * H;
              C sum(0);
              for (int64_t q = 0; q * kc < H; ++q) {
                C part(0);
                for (int64_t k = q * kc; k < std::min(H, (q + 1) * kc); ++k) part += x[k] * w[k];
                sum += part;
              }
              rg[n * nb.rg_row + slot] = sum;
            }
          }
          for (int i = 0; i < N * g.units; ++i) {
            if (grid_element(g, t, H, i, &at)) step_element<T, C>(p, nb, s, phase, at);
          }
        }
      }
    }
    if (p.T % 2 == 1) {
      for (int64_t e = 0; e < p.D * N * H; ++e) b.h[e] = h2[e];
    }
    return ok_status();
  }
};

}  // namespace recur::cuda
