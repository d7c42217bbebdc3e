// Row-major C = alpha * op(A) * op(B) + beta * C, for the reference kernels (RNN projections,
// MatMul, Gemm, Conv via im2col). Plain C++ that the compiler vectorises; not tuned.
#pragma once

#include <cstdint>

namespace recur::reference {

// op(A) is M x K, op(B) is K x N, C is M x N. lda/ldb/ldc are row strides in elements of the
// matrices as stored (before transposition). beta == 0 ignores C's prior contents (NaN too).
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace recur::reference
