// float32 products by a constant B packed at load, for processors with AVX2 and without AVX-512.
//
// There oneDNN 2.6's matmul has no brgemm, so no layout of B it would read as it is: its gemm
// packs B again on every call, which for the few rows of A of a decoder step is most of the
// work (a Tacotron decoder's [8, 1536] by [1536, 4096] Gemms: ~0.84 ms a call on AVX2 against
// ~0.32 ms with AVX-512 on the same Zen 4, where brgemm reads B packed at load). Here B is
// packed once in panels of 16 columns, and each group of 4 panels is read from memory once for
// the few rows of A, their sums in 8 registers a pass (4 rows by a panel, 2 by two, one row by
// four). Products of more rows (kMaxRows) go to oneDNN's matmul over B unpacked once
// (LatePackedB, packed_b.h).
#pragma once

#include <cstdint>
#include <memory>

#include "providers/onednn/common/dnnl_util.h"

namespace recur::onednn::avx2 {

inline constexpr int64_t kPanel = 16;  // columns a panel

struct PanelB {
  int64_t K = 0, N = 0;
  // ceil(N / 16) panels one after another, each [K][16]; the columns past N are zeros.
  std::unique_ptr<AlignedBuffer> m;
  int64_t panels() const { return (N + kPanel - 1) / kPanel; }
};

// Whether this processor takes a product by a B of K x N values: AVX2 with FMA and no AVX-512
// (with AVX-512 the provider's own loops and oneDNN's brgemm run them), under
// ONEDNN_MAX_CPU_ISA's cap; and not a B of more than 1 MiB that the panels would pad by more
// than half again (a few columns: [4096, 5] would take 3.2x its size).
bool wanted(int64_t K, int64_t N);

// B's K x N values (stored K x N row-major, or N x K where `transposed`), each times `scale`.
PanelB pack(const float* b, int64_t K, int64_t N, bool transposed, float scale);

// B back as K x N row-major (dst: K N floats), for oneDNN's matmul (LatePackedB).
void unpack(const PanelB& p, float* dst);

// The most rows of A the loop takes: from about 32 oneDNN's gemm, its packing of B spread over
// the rows, is faster (word_lm's [M, 1024] by [1024, 30000] on a Zen 4 under AVX2: 6.2 against
// 9.2 ms at 8 rows, 15.0 against 14.3 at 32, 124 against 110 at 280).
inline constexpr int64_t kMaxRows = 16;

// y[r][n] = sum over k of a[r][k] B[k][n], plus bias[n] where bias is not null (N values), for
// `rows` rows of K values (a) and N values (y), on up to `threads` threads. Each sum in order
// of k, so Y is the same whatever the threads.
void multiply(const PanelB& p, const float* a, int64_t rows, const float* bias, float* y,
              Threads threads);

}  // namespace recur::onednn::avx2
