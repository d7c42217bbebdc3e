// The small-cell kernels' AVX2 loops (providers/onednn/common/avx2_rows.h): the products give
// the bits of the AVX-512 ones (where this CPU has both), and the vector exp, sigmoid and tanh
// stay within a few float ulps of the functions in double, with the reference's values at
// zeros of either sign, infinities and NaN. The kernels built on them run against the reference
// under isa-avx2/ (OnednnRnnKernel, RowTeam, OnednnRnnParity).
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "providers/onednn/common/avx2_rows.h"
#include "providers/onednn/common/avx512.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn {
namespace {

enum class Fn { kExp, kSigmoid, kTanh };

RECUR_AVX2 void apply(Fn f, const std::vector<float>& x, std::vector<float>& y) {
  y.resize(x.size());
  for (size_t i = 0; i + 8 <= x.size(); i += 8) {
    const __m256 v = _mm256_loadu_ps(x.data() + i);
    _mm256_storeu_ps(y.data() + i, f == Fn::kExp       ? avx2::exp8(v)
                                   : f == Fn::kSigmoid ? avx2::sigmoid8(v)
                                                       : avx2::tanh8(v));
  }
}

double want(Fn f, double x) {
  if (f == Fn::kExp) return std::exp(std::min(x, 88.0));
  if (f == Fn::kSigmoid) return 1.0 / (1.0 + std::exp(-x));
  return std::tanh(x);
}

TEST(Avx2Rows, VectorFunctionsNearDoubleAndExactAtTheEdges) {
  if (!cpu::has(cpu::Feature::kAvx2)) GTEST_SKIP() << "needs AVX2, which this CPU lacks";
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> wide(-30.0f, 30.0f), narrow(-0.2f, 0.2f);
  std::vector<float> x;
  for (int i = 0; i < 4096; ++i) x.push_back(i % 2 ? wide(rng) : narrow(rng));
  for (float v : {0.0625f, -0.0625f, 0.06249f, 1e-20f, -1e-30f, 87.0f, -86.9f, 20.0f, -20.0f})
    x.push_back(v);
  while (x.size() % 8) x.push_back(0.5f);
  const float inf = std::numeric_limits<float>::infinity();
  for (Fn f : {Fn::kExp, Fn::kSigmoid, Fn::kTanh}) {
    std::vector<float> y;
    apply(f, x, y);
    for (size_t i = 0; i < x.size(); ++i) {
      const double w = want(f, x[i]);
      // exp8 stops at e^-87: below it the callers add the value to 1.
      if (f == Fn::kExp && x[i] < -87.0f) continue;
      EXPECT_NEAR(y[i], w, 2e-6 * std::abs(w) + 1e-37) << static_cast<int>(f) << " x " << x[i];
    }
  }
  const std::vector<float> edges = {0.0f, -0.0f, inf, -inf, std::nanf(""), 1e4f, -1e4f, 1.0f};
  std::vector<float> s, t;
  apply(Fn::kSigmoid, edges, s);
  apply(Fn::kTanh, edges, t);
  // A float ulp or two where the reciprocal's refinement lands next to the value; exact where
  // the value's kind (a zero's sign, NaN, 0 at -inf) is the point.
  EXPECT_NEAR(s[0], 0.5f, 1e-7);
  EXPECT_NEAR(s[2], 1.0f, 1.2e-7);
  EXPECT_EQ(s[3], 0.0f) << "sigmoid(-inf)";
  EXPECT_TRUE(std::isnan(s[4]));
  EXPECT_NEAR(s[5], 1.0f, 1.2e-7);
  EXPECT_EQ(s[6], 0.0f);
  EXPECT_EQ(t[0], 0.0f);
  EXPECT_FALSE(std::signbit(t[0]));
  EXPECT_TRUE(std::signbit(t[1])) << "tanh(-0) is -0";
  EXPECT_NEAR(t[2], 1.0f, 1.2e-7);
  EXPECT_NEAR(t[3], -1.0f, 1.2e-7);
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_NEAR(t[5], 1.0f, 1.2e-7);
  EXPECT_NEAR(t[6], -1.0f, 1.2e-7);
  EXPECT_NEAR(t[7], std::tanh(1.0), 2e-7);
}

// Four rows at a time and the row set, over whole 64-column blocks and a last one of 16 to 48.
TEST(Avx2Rows, ProductsGiveTheBitsOfTheAvx512Loops) {
  if (!cpu::has(cpu::Feature::kAvx2) || !avx512::have_avx512())
    GTEST_SKIP() << "needs AVX2 and AVX-512 (not capped), to compare the two";
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const auto& [K, Gp, rows] : {std::array<int64_t, 3>{33, 64, 1},
                                    {200, 208, 7},
                                    {17, 16, 2},
                                    {128, 1056, 45},
                                    {5, 48, 3}}) {
    std::vector<float> src(static_cast<size_t>(Gp * K));
    for (auto& v : src) v = u(rng);
    const auto m = avx512::pack_columns(src.data(), K, avx512::column_sources(Gp, Gp), K, 1);
    const auto* mp = static_cast<const float*>(m->data);
    // The AVX-512 loops read init and write out rows 64-byte aligned.
    std::vector<std::unique_ptr<AlignedBuffer>> keep;
    auto rows_of = [&](int64_t len) {
      std::vector<float*> v;
      for (int64_t r = 0; r < rows; ++r) {
        keep.push_back(std::make_unique<AlignedBuffer>(static_cast<size_t>(len) * sizeof(float)));
        v.push_back(static_cast<float*>(keep.back()->data));
        for (int64_t j = 0; j < len; ++j) v.back()[j] = u(rng);
      }
      return v;
    };
    const std::vector<float*> init = rows_of(Gp), in = rows_of(K);
    const std::vector<const float*> ip(init.begin(), init.end()), xp(in.begin(), in.end());
    std::vector<float*> o512 = rows_of(Gp), o2 = rows_of(Gp), s512 = rows_of(Gp), s2 = rows_of(Gp);
    for (int64_t r0 = 0; r0 < rows; r0 += 4) {
      const int nr = static_cast<int>(std::min<int64_t>(4, rows - r0));
      avx512::multiply_rows(nr, ip.data() + r0, xp.data() + r0, K, mp, Gp, o512.data() + r0);
      avx2::multiply_rows(nr, ip.data() + r0, xp.data() + r0, K, mp, Gp, o2.data() + r0);
    }
    avx512::multiply_row_set(rows, ip.data(), xp.data(), K, mp, Gp, s512.data(), true);
    avx2::multiply_row_set(rows, ip.data(), xp.data(), K, mp, Gp, s2.data(), true);
    const size_t bytes = static_cast<size_t>(Gp) * sizeof(float);
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(std::memcmp(o512[r], o2[r], bytes), 0) << "K " << K << " Gp " << Gp << " row " << r;
      EXPECT_EQ(std::memcmp(s512[r], s2[r], bytes), 0)
          << "row set: K " << K << " Gp " << Gp << " row " << r;
    }
  }
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
