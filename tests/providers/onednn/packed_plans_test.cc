// The plans of products by a packed B (providers/onednn/nn/packed_b.h, PackedPlans): the first
// numbers of rows get a primitive each, later ones run as two chunks of rows (overlapping) on a
// few shared primitives, and one seen often gets its own again. Every product against a
// float64 one, and the chunks' rows bit for bit the exact plans' (a deterministic set, exact
// plans only).
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/nn/packed_b.h"

namespace recur::onednn {
namespace {

TEST(PackedPlans, NewRowCountsRunAsChunksOnAFewPrimitives) {
  constexpr int64_t K = 96, N = 80;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> b(static_cast<size_t>(K * N)), bias(static_cast<size_t>(N));
  for (float& v : b) v = u(rng);
  for (float& v : bias) v = u(rng);
  auto packed = PackedB::make(b.data(), K, N, false, 1.0f, "test");
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  if (!*packed) GTEST_SKIP() << "oneDNN has only its generic matmul on this CPU";
  const PackedPlans chunked(true), exact(false);
  ScratchPool scratch;
  const dnnl::primitive_attr attr = user_scratchpad_attr();
  const Threads one{1, false};
  // Four new counts (exact), then eleven more (chunks), then 700 sixteen times (its own).
  std::vector<int64_t> counts = {3, 40, 17, 600, 1, 2, 5, 33, 64, 100, 255, 513, 1000, 7, 129};
  for (int i = 0; i < 16; ++i) counts.push_back(700);
  for (size_t c = 0; c < counts.size(); ++c) {
    const int64_t M = counts[c];
    std::vector<float> a(static_cast<size_t>(M * K));
    for (float& v : a) v = u(rng);
    std::vector<float> y(static_cast<size_t>(M * N)), y_exact(y.size());
    ASSERT_TRUE(
        chunked.run(**packed, M, a.data(), y.data(), bias.data(), attr, 0, one, scratch, "test")
            .ok());
    ASSERT_TRUE(
        exact.run(**packed, M, a.data(), y_exact.data(), bias.data(), attr, 0, one, scratch, "test")
            .ok());
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        double want = bias[static_cast<size_t>(n)];
        for (int64_t k = 0; k < K; ++k)
          want += static_cast<double>(a[static_cast<size_t>(m * K + k)]) *
                  b[static_cast<size_t>(k * N + n)];
        ASSERT_NEAR(y[static_cast<size_t>(m * N + n)], want, 1e-4 * (1.0 + std::abs(want)))
            << "M " << M << " at " << m << ", " << n;
      }
    }
    EXPECT_EQ(std::memcmp(y.data(), y_exact.data(), y.size() * sizeof(float)), 0)
        << "M " << M << ": the chunks' rows differ from the exact plan's";
  }
  // 3, 40, 17, 600 and then 700 have their own; the rest share chunks of 1 to 512 rows.
  EXPECT_EQ(chunked.exact_plans(), 5u);
  EXPECT_LE(chunked.chunk_plans(), 10u);
  EXPECT_GE(chunked.chunk_plans(), 5u);
  EXPECT_EQ(exact.chunk_plans(), 0u);
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
