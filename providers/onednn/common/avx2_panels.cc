#include "providers/onednn/common/avx2_panels.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn::avx2 {

namespace {

constexpr int kRows = 4;            // rows of A a pass: 8 accumulators, the FMAs' latency hidden
constexpr int64_t kChunkRows = 64;  // rows of A whose pass over a panel keeps A in L2

// Rows [0, NR) of A (row stride K) by one panel [K][16], each row's sums starting at init[16];
// out row r at out + r * ldo, 16 values. Named accumulators, not an array: GCC 12 kept an
// array's vectors in memory as well, with 8 stores a step (twice the loop's time).
template <int NR>
__attribute__((target("avx2,fma"))) void pass(const float* a, int64_t K, const float* panel,
                                              const float* init, float* out, int64_t ldo) {
  const __m256 i0 = _mm256_loadu_ps(init), i1 = _mm256_loadu_ps(init + 8);
  __m256 c00 = i0, c01 = i1, c10 = i0, c11 = i1, c20 = i0, c21 = i1, c30 = i0, c31 = i1;
  for (int64_t k = 0; k < K; ++k) {
    const __m256 b0 = _mm256_load_ps(panel + k * kPanel);
    const __m256 b1 = _mm256_load_ps(panel + k * kPanel + 8);
    const __m256 s0 = _mm256_broadcast_ss(a + k);
    c00 = _mm256_fmadd_ps(s0, b0, c00);
    c01 = _mm256_fmadd_ps(s0, b1, c01);
    if constexpr (NR > 1) {
      const __m256 s1 = _mm256_broadcast_ss(a + K + k);
      c10 = _mm256_fmadd_ps(s1, b0, c10);
      c11 = _mm256_fmadd_ps(s1, b1, c11);
    }
    if constexpr (NR > 2) {
      const __m256 s2 = _mm256_broadcast_ss(a + 2 * K + k);
      c20 = _mm256_fmadd_ps(s2, b0, c20);
      c21 = _mm256_fmadd_ps(s2, b1, c21);
    }
    if constexpr (NR > 3) {
      const __m256 s3 = _mm256_broadcast_ss(a + 3 * K + k);
      c30 = _mm256_fmadd_ps(s3, b0, c30);
      c31 = _mm256_fmadd_ps(s3, b1, c31);
    }
  }
  const __m256 acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  for (int r = 0; r < NR; ++r) {
    _mm256_storeu_ps(out + r * ldo, acc[r][0]);
    _mm256_storeu_ps(out + r * ldo + 8, acc[r][1]);
  }
}

using Pass = void (*)(const float*, int64_t, const float*, const float*, float*, int64_t);
constexpr Pass kPasses[kRows + 1] = {nullptr, pass<1>, pass<2>, pass<3>, pass<4>};

// Panels [j0, j1) for rows [r0, r1).
void panels(const PanelB& p, const float* a, int64_t r0, int64_t r1, const float* bias, float* y,
            int64_t j0, int64_t j1) {
  const int64_t K = p.K, N = p.N;
  alignas(32) float init[kPanel];
  alignas(32) float tail[kRows * kPanel];
  for (int64_t j = j0; j < j1; ++j) {
    const int64_t c0 = j * kPanel, width = std::min(kPanel, N - c0);
    const float* panel = static_cast<const float*>(p.m->data) + j * K * kPanel;
    std::fill(init, init + kPanel, 0.0f);
    if (bias) std::copy(bias + c0, bias + c0 + width, init);
    for (int64_t r = r0; r < r1; r += kRows) {
      const int nr = static_cast<int>(std::min<int64_t>(kRows, r1 - r));
      if (width == kPanel) {
        kPasses[nr](a + r * K, K, panel, init, y + r * N + c0, N);
        continue;
      }
      kPasses[nr](a + r * K, K, panel, init, tail, kPanel);
      for (int i = 0; i < nr; ++i)
        std::memcpy(y + (r + i) * N + c0, tail + i * kPanel, static_cast<size_t>(width) * 4);
    }
  }
}

}  // namespace

bool wanted(int64_t K, int64_t N) {
  if (avx512::have_avx512() || !cpu::has(cpu::Feature::kAvx2)) return false;
  const double plain = static_cast<double>(K) * static_cast<double>(N);
  const double padded =
      static_cast<double>(K) * static_cast<double>((N + kPanel - 1) / kPanel * kPanel);
  return padded <= 1.5 * plain || plain * sizeof(float) <= double{1 << 20};
}

PanelB pack(const float* b, int64_t K, int64_t N, bool transposed, float scale) {
  PanelB p;
  p.K = K;
  p.N = N;
  const size_t floats = static_cast<size_t>(p.panels() * K * kPanel);
  p.m = std::make_unique<AlignedBuffer>(std::max<size_t>(floats, 1) * sizeof(float));
  float* m = static_cast<float*>(p.m->data);
  std::fill(m, m + floats, 0.0f);
  // In B's storage order, so that B is read once from front to back.
  if (transposed) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        m[(n / kPanel * K + k) * kPanel + n % kPanel] = b[n * K + k] * scale;
  } else {
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        m[(n / kPanel * K + k) * kPanel + n % kPanel] = b[k * N + n] * scale;
  }
  return p;
}

void unpack(const PanelB& p, float* dst) {
  const float* m = static_cast<const float*>(p.m->data);
  for (int64_t k = 0; k < p.K; ++k)
    for (int64_t n = 0; n < p.N; ++n)
      dst[k * p.N + n] = m[(n / kPanel * p.K + k) * kPanel + n % kPanel];
}

void multiply(const PanelB& p, const float* a, int64_t rows, const float* bias, float* y,
              Threads threads) {
  const int64_t n_panels = p.panels();
  if (rows <= 0 || n_panels == 0) return;
  const Threads want = threads_for(
      static_cast<double>(rows) * static_cast<double>(p.K) * static_cast<double>(p.N), threads);
  CoreLease lease;
  if (want.max > 1) lease.acquire(want.max, want.shrink);
  const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), n_panels);
  for (int64_t r0 = 0; r0 < rows; r0 += kChunkRows) {
    const int64_t r1 = std::min(rows, r0 + kChunkRows);
    in_parts(n_panels, jobs,
             [&](int64_t j0, int64_t j1) { panels(p, a, r0, r1, bias, y, j0, j1); });
  }
}

}  // namespace recur::onednn::avx2
