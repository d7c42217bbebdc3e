// The cuda-generic RNN's sequence of operations, over a backend: one GEMM for the input
// projection of every step and direction, then per step a GEMM for the recurrent part and the
// fused gate kernel (GRU with linear_before_reset=0: two of each). The CUDA kernel's backend
// uses cuBLAS and the kernels of generic_rnn_kernels.cu; HostRnnBackend runs the same cell
// functions (generic_cell.h) in loops, so the CPU tests check this exact sequence and math.
#pragma once

#include <cstdint>
#include <vector>

#include "providers/cuda/rnn/generic_cell.h"
#include "runtime/core/status.h"

namespace recur::cuda {

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
  // One kernel for all the steps (persistent_rnn_kernel) instead of two launches per step.
  bool persistent = false;

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
  // Every step of every row in one launch: a block per (direction, batch row) computes its
  // row of H R^T (persistent_rg) and then the cell's elements, step after step.
  virtual Status persistent(const cell::CellParams& p, const cell::StepBuffers<T, C>& b,
                            const C* r) = 0;
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
  if (r.persistent && T_ * N > 0) {
    RECUR_RETURN_IF_ERROR(be.persistent(p, sb, r.r));
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
                           int phase, int64_t e) {
  if (p.cell == cell::kLstm) {
    cell::lstm_element<T, C>(p, b, s, e);
  } else if (p.cell == cell::kGru) {
    cell::gru_element<T, C>(p, b, s, e, phase);
  } else {
    cell::rnn_element<T, C>(p, b, s, e);
  }
}

// Element k of row `row` (= d*N + n) of this step's recurrent product, as the persistent kernel
// computes it: H_{t-1} R^T over all gates, or for a GRU with linear_before_reset=0 the z and r
// columns (second = false) and then the h columns from r*H_{t-1} (second = true).
template <class T, class C>
RECUR_HD void persistent_rg(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r,
                            int64_t row, int64_t k, bool second) {
  const int64_t H = p.H, GH = p.gates() * H;
  const int64_t d = row / p.N;
  const C* src = second ? b.aux + row * H : b.h + row * H;
  const int64_t col = second ? 2 * H + k : k;
  const C* w = r + (d * GH + col) * H;
  C acc(0);
  for (int64_t m = 0; m < H; ++m) acc += src[m] * w[m];
  const_cast<C*>(b.rg)[row * GH + col] = acc;
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
  // The persistent kernel's order: rows one after the other (blocks are independent), and
  // within a row each phase over all its threads before the next (the __syncthreads).
  Status persistent(const cell::CellParams& p, const cell::StepBuffers<T, C>& b,
                    const C* r) override {
    const int64_t H = p.H, GH = p.gates() * H;
    const bool gru0 = p.cell == cell::kGru && !p.linear_before_reset;
    for (int64_t row = 0; row < p.D * p.N; ++row) {
      for (int64_t s = 0; s < p.T; ++s) {
        for (int64_t k = 0; k < (gru0 ? 2 * H : GH); ++k)
          persistent_rg<T, C>(p, b, r, row, k, false);
        for (int64_t j = 0; j < H; ++j) step_element<T, C>(p, b, s, 0, row * H + j);
        if (!gru0) continue;
        for (int64_t k = 0; k < H; ++k) persistent_rg<T, C>(p, b, r, row, k, true);
        for (int64_t j = 0; j < H; ++j) step_element<T, C>(p, b, s, 1, row * H + j);
      }
    }
    return ok_status();
  }
};

}  // namespace recur::cuda
