// recur's AVX2 product over B packed in panels (providers/onednn/common/avx2_panels.h), which
// the oneDNN provider's MatMul and Gemm use without AVX-512: against sums in double for B
// stored either way, scaled, with and without a bias, for row counts on and off the 4-row
// passes (one row: several panels a pass), N on and off the 16-column panels, K of 0; threads
// change nothing; B unpacked is B.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "providers/onednn/common/avx2_panels.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn::avx2 {
namespace {

std::vector<float> random_values(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

TEST(Avx2Panels, ProductsMatchSumsInDouble) {
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << cpu::why_not(cpu::Feature::kAvx2);
  std::mt19937 rng(5);
  struct Case {
    int64_t rows, K, N;
    bool trans, bias;
    float scale;
  };
  for (const Case& c : {Case{1, 7, 16, false, false, 1.0f}, Case{3, 40, 33, true, true, 0.5f},
                        Case{4, 64, 900, false, true, 1.0f}, Case{7, 19, 5, true, false, -2.0f},
                        Case{16, 128, 48, false, true, 1.0f}, Case{70, 33, 70, true, true, 1.0f},
                        Case{5, 0, 20, false, true, 1.0f}, Case{1, 50, 100, false, true, 1.0f},
                        Case{1, 300, 64, true, false, 1.0f}, Case{1, 9, 200, false, true, 0.5f},
                        Case{1, 0, 40, true, true, 1.0f}, Case{65, 20, 90, false, true, 1.0f}}) {
    const std::vector<float> b = random_values(static_cast<size_t>(c.K * c.N), rng);
    const std::vector<float> a = random_values(static_cast<size_t>(c.rows * c.K), rng);
    const std::vector<float> bias = random_values(static_cast<size_t>(c.N), rng);
    const PanelB p = pack(b.data(), c.K, c.N, c.trans, c.scale);
    for (int threads : {1, 2}) {
      std::vector<float> y(static_cast<size_t>(c.rows * c.N), NAN);
      multiply(p, a.data(), c.rows, c.bias ? bias.data() : nullptr, y.data(), {threads, false});
      for (int64_t r = 0; r < c.rows; ++r) {
        for (int64_t n = 0; n < c.N; ++n) {
          double want = c.bias ? bias[static_cast<size_t>(n)] : 0.0;
          for (int64_t k = 0; k < c.K; ++k) {
            const float bkn =
                c.trans ? b[static_cast<size_t>(n * c.K + k)] : b[static_cast<size_t>(k * c.N + n)];
            want += static_cast<double>(a[static_cast<size_t>(r * c.K + k)]) * bkn * c.scale;
          }
          const float got = y[static_cast<size_t>(r * c.N + n)];
          ASSERT_NEAR(got, want, 1e-5 * (1.0 + static_cast<double>(c.K)))
              << "rows " << c.rows << " K " << c.K << " N " << c.N << " at " << r << "," << n
              << ", " << threads << " threads";
        }
      }
    }
    std::vector<float> back(static_cast<size_t>(c.K * c.N), NAN);
    unpack(p, back.data());
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t n = 0; n < c.N; ++n)
        ASSERT_EQ(
            back[static_cast<size_t>(k * c.N + n)],
            (c.trans ? b[static_cast<size_t>(n * c.K + k)] : b[static_cast<size_t>(k * c.N + n)]) *
                c.scale);
  }
}

}  // namespace
}  // namespace recur::onednn::avx2

#endif  // RECUR_HAVE_ONEDNN
