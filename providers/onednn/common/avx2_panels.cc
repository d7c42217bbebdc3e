#include "providers/onednn/common/avx2_panels.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "providers/onednn/common/avx2_rows.h"
#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn::avx2 {

namespace {

constexpr int kRows = 4;            // rows of A a pass at most
constexpr int kGroup = 4;           // panels a pass at most
constexpr int64_t kChunkRows = 64;  // rows of A whose pass over a panel keeps A in L2

// Rows [0, NR) of A (row stride K) by NP panels from `panel` (each [K][16], one after
// another), each row's sums starting at init[16 NP]; out row r at out + r * ldo, 16 NP values.
// NR NP <= 4, so 8 accumulators: with fewer, each step waits for the FMA before it (4 cycles),
// which halved one row's speed over a B in L2 when a pass took one panel. The arrays are
// unrolled in full, so that they live in registers.
template <int NR, int NP>
RECUR_AVX2 void pass(const float* a, int64_t K, const float* panel, const float* init, float* out,
                     int64_t ldo) {
  __m256 acc[NR][NP][2];
#pragma GCC unroll 4
  for (int r = 0; r < NR; ++r)
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p)
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) acc[r][p][h] = _mm256_loadu_ps(init + p * kPanel + 8 * h);
  for (int64_t k = 0; k < K; ++k) {
    __m256 b[NP][2];
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p)
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) b[p][h] = _mm256_load_ps(panel + (p * K + k) * kPanel + 8 * h);
#pragma GCC unroll 4
    for (int r = 0; r < NR; ++r) {
      const __m256 s = _mm256_broadcast_ss(a + r * K + k);
#pragma GCC unroll 4
      for (int p = 0; p < NP; ++p)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) acc[r][p][h] = _mm256_fmadd_ps(s, b[p][h], acc[r][p][h]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < NR; ++r)
#pragma GCC unroll 4
    for (int p = 0; p < NP; ++p)
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h)
        _mm256_storeu_ps(out + r * ldo + p * kPanel + 8 * h, acc[r][p][h]);
}

using Pass = void (*)(const float*, int64_t, const float*, const float*, float*, int64_t);
// By rows, then panels: a pass of NR rows takes up to kGroup / NR panels (3 rows: one).
constexpr Pass kPasses[kRows + 1][kGroup + 1] = {
    {},
    {nullptr, pass<1, 1>, pass<1, 2>, pass<1, 3>, pass<1, 4>},
    {nullptr, pass<2, 1>, pass<2, 2>},
    {nullptr, pass<3, 1>},
    {nullptr, pass<4, 1>}};

// Panels [j0, j1) for rows [r0, r1), kGroup panels at a time, each group read from memory once
// for all the rows.
void panels(const PanelB& p, const float* a, int64_t r0, int64_t r1, const float* bias, float* y,
            int64_t j0, int64_t j1) {
  const int64_t K = p.K, N = p.N;
  alignas(32) float init[kGroup * kPanel];
  alignas(32) float tail[kRows * kGroup * kPanel];
  for (int64_t j = j0; j < j1; j += kGroup) {
    const int64_t jn = std::min<int64_t>(kGroup, j1 - j);
    const int64_t c0 = j * kPanel;
    std::fill(init, init + kGroup * kPanel, 0.0f);
    if (bias) std::copy(bias + c0, bias + std::min(N, c0 + jn * kPanel), init);
    const float* group = static_cast<const float*>(p.m->data) + j * K * kPanel;
    for (int64_t r = r0; r < r1; r += kRows) {
      const int nr = static_cast<int>(std::min<int64_t>(kRows, r1 - r));
      const int64_t per_pass = nr == 1 ? 4 : nr == 2 ? 2 : 1;
      for (int64_t q = 0; q < jn; q += per_pass) {
        const int np = static_cast<int>(std::min(per_pass, jn - q));
        const int64_t c = c0 + q * kPanel, width = std::min(np * kPanel, N - c);
        const Pass run = kPasses[nr][np];
        const float* from = group + q * K * kPanel;
        if (width == np * kPanel) {
          run(a + r * K, K, from, init + q * kPanel, y + r * N + c, N);
          continue;
        }
        run(a + r * K, K, from, init + q * kPanel, tail, kGroup * kPanel);
        for (int i = 0; i < nr; ++i)
          std::memcpy(y + (r + i) * N + c, tail + i * kGroup * kPanel,
                      static_cast<size_t>(width) * 4);
      }
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
