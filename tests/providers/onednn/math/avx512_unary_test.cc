// The oneDNN provider's AVX-512 Erf, Sin and Cos (math/avx512_unary.h) against the C library in
// double: Erf over a dense grid of [-4.5, 4.5] and its edges (infinities, signed zeros, NaN,
// denormals); Sin and Cos over [-8192, 8192], around multiples of pi/2, and beyond (where the
// C library takes over); each through a session against the reference provider too. And the
// magnitudes scan (avx512.h) against a loop in double.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"

namespace recur {
namespace {

TEST(OnednnErf, WithinAFewFloatStepsOfErf) {
  if (!onednn::avx512::have_avx512()) GTEST_SKIP() << "needs AVX-512";
  std::vector<float> x;
  for (int i = 0; i <= 450000; ++i) x.push_back(static_cast<float>(i) * 1e-5f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {1e-30f, 1e-38f, 1e-44f, 3.9f, 3.92f, 4.0f, 5.0f, 1e10f, inf}) x.push_back(v);
  const size_t half = x.size();
  for (size_t i = 0; i < half; ++i) x.push_back(-x[i]);
  x.push_back(-0.0f);
  std::vector<float> y(x.size() + 3);  // a length that is not a multiple of 16
  onednn::avx512::unary(onednn::avx512::Unary::kErf, x.data(), static_cast<int64_t>(x.size()),
                        y.data());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::erf(static_cast<double>(x[i]));
    const double err = std::abs(static_cast<double>(y[i]) - want);
    worst = std::max(worst, err / std::max(std::abs(want), 1e-30));
    ASSERT_LE(err, 4e-7 * std::abs(want) + 1e-45) << "erf(" << x[i] << ") = " << y[i];
    ASSERT_EQ(std::signbit(y[i]), std::signbit(x[i])) << x[i];
  }
  std::cout << "[ erf16    ] largest relative error " << worst << "\n";
  float nan = std::nanf("");
  float out = 0;
  onednn::avx512::unary(onednn::avx512::Unary::kErf, &nan, 1, &out);
  EXPECT_TRUE(std::isnan(out));
}

// Sin and Cos: the absolute error (sin and cos are at most 1; near their zeros a float32
// argument's own rounding dominates any relative figure) under 2.5e-7 up to |x| = 8192, and the
// C library's float result beyond.
TEST(OnednnSinCos, WithinAFewFloatStepsOfTheCLibrary) {
  if (!onednn::avx512::have_avx512()) GTEST_SKIP() << "needs AVX-512";
  std::vector<float> x;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> wide(-8192.0f, 8192.0f), narrow(-7.0f, 7.0f);
  for (int i = 0; i < 200000; ++i) x.push_back(i % 2 ? wide(rng) : narrow(rng));
  for (int k = -40; k <= 40; ++k) {  // multiples of pi/2 and their float neighbours
    const float m = static_cast<float>(k * 1.5707963267948966);
    x.push_back(m);
    x.push_back(std::nextafter(m, 1e9f));
    x.push_back(std::nextafter(m, -1e9f));
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, 1e-30f, 8192.0f, 8192.5f, 1e5f, -3e7f, 1e30f, inf, -inf}) {
    x.push_back(v);
  }
  x.push_back(std::nanf(""));
  for (bool cosine : {false, true}) {
    std::vector<float> y(x.size());
    onednn::avx512::unary(cosine ? onednn::avx512::Unary::kCos : onednn::avx512::Unary::kSin,
                          x.data(), static_cast<int64_t>(x.size()), y.data());
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double d = static_cast<double>(x[i]);
      const double want = cosine ? std::cos(d) : std::sin(d);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(y[i])) << x[i];
        continue;
      }
      if (std::abs(x[i]) > 8192.0f) {  // the C library, lane by lane
        ASSERT_EQ(y[i], cosine ? std::cos(x[i]) : std::sin(x[i])) << x[i];
        continue;
      }
      const double err = std::abs(static_cast<double>(y[i]) - want);
      worst = std::max(worst, err);
      ASSERT_LE(err, 2.5e-7) << (cosine ? "cos(" : "sin(") << x[i] << ") = " << y[i];
    }
    std::cout << "[ sincos16 ] " << (cosine ? "cos" : "sin") << ": largest absolute error " << worst
              << "\n";
  }
}

// Through sessions: oneDNN's Erf, Sin and Cos against the reference provider's.
// The scan that decides whether a convolution may run by Winograd's algorithm (conv.cc):
// the largest magnitude and the sum of magnitudes against a loop in double, at lengths around
// whole vectors and the 1024-value blocks; NaN and infinities anywhere, the tail included.
TEST(OnednnMagnitudes, MatchALoopInDouble) {
  if (!onednn::avx512::have_avx512()) GTEST_SKIP() << "needs AVX-512";
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (int64_t n : {0, 1, 15, 16, 17, 1023, 1024, 1025, 5000}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    double sum = 0.0;
    float max = 0.0f;
    for (float v : x) {
      sum += std::fabs(static_cast<double>(v));
      max = std::max(max, std::fabs(v));
    }
    const onednn::avx512::Magnitudes m = onednn::avx512::magnitudes(x.data(), n);
    EXPECT_TRUE(m.finite) << n;
    EXPECT_EQ(m.max, max) << n;
    EXPECT_NEAR(m.sum, sum, 1e-5 * sum + 1e-30) << n;
    if (n == 0) continue;
    for (float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity()}) {
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        std::vector<float> y = x;
        y[static_cast<size_t>(at)] = bad;
        EXPECT_FALSE(onednn::avx512::magnitudes(y.data(), n).finite) << n << " at " << at;
      }
    }
  }
}

TEST(OnednnErf, MatchesTheReferenceInASession) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  for (const char* op : {"Erf", "Sin", "Cos"}) {
    testing::ModelBuilder mb(13);
    mb.input("X", DType::kFloat32, {3, 1001});
    mb.output("Y", DType::kFloat32);
    mb.node(op, {"X"}, {"Y"}, "f");
    const std::string bytes = mb.bytes();
    std::mt19937 rng(3);
    Tensor x = testing::random_tensor({3, 1001}, rng, 4.0f);
    x.data<float>()[5] = std::nanf("");
    x.data<float>()[6] = -std::numeric_limits<float>::infinity();
    x.data<float>()[7] = 1e6f;
    const Feeds feeds = {{"X", x}};
    Session dnn = Session::from_bytes(bytes.data(), bytes.size(),
                                      SessionOptions().providers({"onednn", "reference"}));
    Session ref =
        Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
    if (onednn::avx512::have_avx512()) {
      EXPECT_EQ(dnn.assignment().front().provider, "onednn") << op;
    }
    const Tensor got = dnn.run(feeds)[0], want = ref.run(feeds)[0];
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float g = got.data<float>()[i], w = want.data<float>()[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << op << " " << i;
      } else {
        EXPECT_NEAR(g, w, 5e-7 * std::abs(w) + 3e-7) << op << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace recur

#endif  // RECUR_HAVE_ONEDNN
