#include "providers/onednn/common/channels_last.h"

#include <algorithm>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"

namespace recur::onednn {

namespace {

RECUR_AVX512 inline __m512 lo(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
RECUR_AVX512 inline __m512 hi(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

// dst[j][i] = src[i][j] for a 16 x 16 tile: 32-bit, then 64-bit interleaves, then the 128-bit
// lanes gathered by two rounds of shuffle_f32x4.
RECUR_AVX512 void tile16(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ss);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4q + k]: column k (mod 4) of each 4-column group, rows 4q..4q+3.
  __m512 u[16];
  for (int q = 0; q < 4; ++q) {
    u[4 * q] = lo(t[4 * q], t[4 * q + 2]);
    u[4 * q + 1] = hi(t[4 * q], t[4 * q + 2]);
    u[4 * q + 2] = lo(t[4 * q + 1], t[4 * q + 3]);
    u[4 * q + 3] = hi(t[4 * q + 1], t[4 * q + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x44);
    const __m512 v1 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xEE);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x44);
    const __m512 v3 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xEE);
    _mm512_storeu_ps(dst + (k)*ds, _mm512_shuffle_f32x4(v0, v2, 0x88));
    _mm512_storeu_ps(dst + (4 + k) * ds, _mm512_shuffle_f32x4(v0, v2, 0xDD));
    _mm512_storeu_ps(dst + (8 + k) * ds, _mm512_shuffle_f32x4(v1, v3, 0x88));
    _mm512_storeu_ps(dst + (12 + k) * ds, _mm512_shuffle_f32x4(v1, v3, 0xDD));
  }
}

// Rows [r0, r1) of one plane.
RECUR_AVX512 void plane_rows(const float* x, float* y, int64_t rows, int64_t cols, int64_t r0,
                             int64_t r1) {
  int64_t r = r0;
  for (; r + 16 <= r1; r += 16) {
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) tile16(x + r * cols + c, cols, y + c * rows + r, rows);
    for (; c < cols; ++c)
      for (int64_t i = r; i < r + 16; ++i) y[c * rows + i] = x[i * cols + c];
  }
  for (; r < r1; ++r)
    for (int64_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
}

}  // namespace

void transpose_planes(const float* x, float* y, int64_t planes, int64_t rows, int64_t cols,
                      int threads, bool shrink) {
  if (planes <= 0 || rows <= 0 || cols <= 0) return;
  // Jobs of 16-row strips; a copy under 1 MiB stays on the calling thread, where a handoff
  // would cost what it saves.
  const int64_t strips = (rows + 15) / 16;
  const int64_t total = planes * strips;
  constexpr int64_t kThreadedFloats = int64_t{1} << 18;
  CoreLease lease;
  if (threads > 1 && planes * rows * cols >= kThreadedFloats) lease.acquire(threads, shrink);
  const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), total);
  in_parts(total, jobs, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1;) {
      const int64_t p = s / strips, first = s % strips;
      const int64_t last = std::min(strips, first + (s1 - s));
      plane_rows(x + p * rows * cols, y + p * rows * cols, rows, cols, first * 16,
                 std::min(rows, last * 16));
      s += last - first;
    }
  });
}

}  // namespace recur::onednn
