#include "providers/onednn/common/channels_last.h"

#include <algorithm>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/job_pool.h"
#include "runtime/core/cpu_isa.h"

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

// The tails of a strip, and whole strips on processors without AVX2.
void plain_rows(const float* x, float* y, int64_t rows, int64_t cols, int64_t r0, int64_t r1,
                int64_t c0) {
  for (int64_t c = c0; c < cols; ++c)
    for (int64_t i = r0; i < r1; ++i) y[c * rows + i] = x[i * cols + c];
}

// Rows [r0, r1) of one plane.
RECUR_AVX512 void plane_rows(const float* x, float* y, int64_t rows, int64_t cols, int64_t r0,
                             int64_t r1) {
  int64_t r = r0;
  for (; r + 16 <= r1; r += 16) {
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) tile16(x + r * cols + c, cols, y + c * rows + r, rows);
    plain_rows(x, y, rows, cols, r, r + 16, c);
  }
  plain_rows(x, y, rows, cols, r, r1, 0);
}

// The same on AVX2, in 8 x 8 tiles: 32-bit interleaves, 64-bit shuffles within the 128-bit
// lanes, then the lanes exchanged.
__attribute__((target("avx2"))) void tile8(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ss);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4h + k]: columns k and k + 4 of rows 4h..4h+3.
  for (int h = 0; h < 2; ++h) {
    const __m256* q = t + 4 * h;
    u[4 * h] = _mm256_shuffle_ps(q[0], q[2], 0x44);
    u[4 * h + 1] = _mm256_shuffle_ps(q[0], q[2], 0xEE);
    u[4 * h + 2] = _mm256_shuffle_ps(q[1], q[3], 0x44);
    u[4 * h + 3] = _mm256_shuffle_ps(q[1], q[3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(dst + k * ds, _mm256_permute2f128_ps(u[k], u[4 + k], 0x20));
    _mm256_storeu_ps(dst + (4 + k) * ds, _mm256_permute2f128_ps(u[k], u[4 + k], 0x31));
  }
}

__attribute__((target("avx2"))) void plane_rows_avx2(const float* x, float* y, int64_t rows,
                                                     int64_t cols, int64_t r0, int64_t r1) {
  int64_t r = r0;
  for (; r + 8 <= r1; r += 8) {
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) tile8(x + r * cols + c, cols, y + c * rows + r, rows);
    plain_rows(x, y, rows, cols, r, r + 8, c);
  }
  plain_rows(x, y, rows, cols, r, r1, 0);
}

}  // namespace

void transpose_planes(const float* x, float* y, int64_t planes, int64_t rows, int64_t cols,
                      int threads, bool shrink) {
  if (planes <= 0 || rows <= 0 || cols <= 0) return;
  enum class Isa { kAvx512, kAvx2, kPlain };
  const Isa isa = avx512::have_avx512()           ? Isa::kAvx512
                  : cpu::has(cpu::Feature::kAvx2) ? Isa::kAvx2
                                                  : Isa::kPlain;
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
      const float* xp = x + p * rows * cols;
      float* yp = y + p * rows * cols;
      const int64_t r0 = first * 16, r1 = std::min(rows, last * 16);
      if (isa == Isa::kAvx512) {
        plane_rows(xp, yp, rows, cols, r0, r1);
      } else if (isa == Isa::kAvx2) {
        plane_rows_avx2(xp, yp, rows, cols, r0, r1);
      } else {
        plain_rows(xp, yp, rows, cols, r0, r1, 0);
      }
      s += last - first;
    }
  });
}

}  // namespace recur::onednn
