// The oneDNN provider's Erf (avx512::erf16) against erf in double: every float32 step from 0 to
// 4.5 in a dense grid, both signs, lengths off the vector width, infinities, signed zeros, NaN,
// denormals; and through a session against the reference provider.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

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

TEST(OnednnErf, MatchesTheReferenceInASession) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  testing::ModelBuilder mb(13);
  mb.input("X", DType::kFloat32, {3, 1001});
  mb.output("Y", DType::kFloat32);
  mb.node("Erf", {"X"}, {"Y"}, "erf");
  const std::string bytes = mb.bytes();
  std::mt19937 rng(3);
  Tensor x = testing::random_tensor({3, 1001}, rng, 2.0f);
  x.data<float>()[5] = std::nanf("");
  x.data<float>()[6] = -std::numeric_limits<float>::infinity();
  const Feeds feeds = {{"X", x}};
  Session dnn = Session::from_bytes(bytes.data(), bytes.size(),
                                    SessionOptions().providers({"onednn", "reference"}));
  Session ref =
      Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
  if (onednn::avx512::have_avx512()) EXPECT_EQ(dnn.assignment().front().provider, "onednn");
  const Tensor got = dnn.run(feeds)[0], want = ref.run(feeds)[0];
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << i;
    } else {
      EXPECT_NEAR(g, w, 5e-7 * std::abs(w) + 1e-7) << i;
    }
  }
}

}  // namespace
}  // namespace recur

#endif  // RECUR_HAVE_ONEDNN
