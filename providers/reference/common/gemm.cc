#include "providers/reference/common/gemm.h"

#include <algorithm>
#include <vector>

namespace recur::reference {

namespace {
constexpr int64_t kBlockK = 256;
constexpr int64_t kBlockN = 512;
}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (beta == T(0)) {
      std::fill(ci, ci + n, T(0));
    } else if (beta != T(1)) {
      for (int64_t j = 0; j < n; ++j) ci[j] *= beta;
    }
  }
  if (k == 0 || alpha == T(0)) return;
  // With B transposed, a block of B is copied so that the inner loop runs along contiguous
  // memory of both B and C.
  thread_local std::vector<T> packed;  // kept from call to call
  for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    const int64_t kb = std::min(kBlockK, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {
      const int64_t nb = std::min(kBlockN, n - j0);
      const T* bp;
      int64_t bstride;
      if (trans_b) {
        packed.resize(static_cast<size_t>(kb * nb));
        for (int64_t j = 0; j < nb; ++j)
          for (int64_t kk = 0; kk < kb; ++kk)
            packed[static_cast<size_t>(kk * nb + j)] = b[(j0 + j) * ldb + k0 + kk];
        bp = packed.data();
        bstride = nb;
      } else {
        bp = b + k0 * ldb + j0;
        bstride = ldb;
      }
      for (int64_t i = 0; i < m; ++i) {
        T* ci = c + i * ldc + j0;
        for (int64_t kk = 0; kk < kb; ++kk) {
          const T av = alpha * (trans_a ? a[(k0 + kk) * lda + i] : a[i * lda + k0 + kk]);
          const T* bk = bp + kk * bstride;
          for (int64_t j = 0; j < nb; ++j) ci[j] += av * bk[j];
        }
      }
    }
  }
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t);

}  // namespace recur::reference
