// The plans of products by a packed B (providers/onednn/nn/packed_b.h, PackedPlans): the first
// numbers of rows get a primitive each, later ones run as two chunks of rows (overlapping) on a
// few shared primitives, and one seen often gets its own again. Every product against a
// float64 one, and the chunks' rows bit for bit the exact plans' (a deterministic set, exact
// plans only).
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/nn/packed_b.h"
#include "tests/support/providers.h"

namespace recur::onednn {
namespace {

// Row m, column n of A [M, K] by B [K, N] plus the bias, in float64.
double product(const std::vector<float>& a, const std::vector<float>& b,
               const std::vector<float>& bias, int64_t K, int64_t N, int64_t m, int64_t n) {
  double want = bias[static_cast<size_t>(n)];
  for (int64_t k = 0; k < K; ++k)
    want +=
        static_cast<double>(a[static_cast<size_t>(m * K + k)]) * b[static_cast<size_t>(k * N + n)];
  return want;
}

TEST(PackedPlans, NewRowCountsRunAsChunksOnAFewPrimitives) {
  // On an AVX2 Zen 3 oneDNN's matmul gave a row other bits at other row counts (the chunks'
  // rows differed from the exact plan's in the last place).
  if (!testing::have_onednn_avx512()) GTEST_SKIP() << "needs the oneDNN provider and AVX-512";
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
        const double want = product(a, b, bias, K, N, m, n);
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

// B packed once in oneDNN's layout (avx512.h, pack_matrix_panels) serves recur's own loop and
// oneDNN's matmul: the matmul reads that very buffer, and both agree with a float64 product,
// for K and N that are not whole blocks (16 rows, 64 columns) and with a bias.
TEST(PackedB, TheLoopsPanelsServeOneDnnWithoutACopy) {
  if (!avx512::have_avx512()) GTEST_SKIP() << "recur's own loop needs AVX-512";
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const auto& [K, N] :
       {std::pair<int64_t, int64_t>{100, 70}, {64, 128}, {33, 17}, {256, 200}}) {
    std::vector<float> b(static_cast<size_t>(K * N)), bias(static_cast<size_t>(N));
    for (float& v : b) v = u(rng);
    for (float& v : bias) v = u(rng);
    const avx512::PackedMatrix panels =
        avx512::pack_matrix_panels(b.data(), K, N, false, 1.0f, bias.data(), N, 1.0f);
    auto packed = PackedB::adopt(panels.m, K, N, "test");
    ASSERT_TRUE(packed.ok()) << packed.status().message();
    if (!*packed) GTEST_SKIP() << "oneDNN has only its generic matmul on this CPU";
    const PackedPlans plans(false);
    ScratchPool scratch;
    const int64_t M = 9;
    const int64_t a_dims[] = {M, K}, a_strides[] = {K, 1}, y_dims[] = {M, N}, y_strides[] = {N, 1};
    const int64_t bias_dims[] = {1, N};
    const dnnl::memory::desc bias_d = strided_desc(bias_dims, y_strides);
    auto plan = (*packed)->plan(strided_desc(a_dims, a_strides), strided_desc(y_dims, y_strides),
                                &bias_d, user_scratchpad_attr(), Threads{1, false}, "test");
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->b_data, panels.m->data) << K << "x" << N << ": oneDNN read a copy of B";
    std::vector<float> a(static_cast<size_t>(M * K));
    for (float& v : a) v = u(rng);
    std::vector<float> y_dnn(static_cast<size_t>(M * N)), y_loop(y_dnn.size());
    ASSERT_TRUE(plans
                    .run(**packed, M, a.data(), y_dnn.data(), bias.data(), user_scratchpad_attr(),
                         0, Threads{1, false}, scratch, "test")
                    .ok());
    std::vector<float> loop_scratch(static_cast<size_t>(avx512::kRowBlock * panels.Np) + 16);
    float* aligned = loop_scratch.data();
    while (reinterpret_cast<uintptr_t>(aligned) % 64 != 0) ++aligned;
    avx512::multiply_matrix(panels, a.data(), M, y_loop.data(), aligned);
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        const double want = product(a, b, bias, K, N, m, n);
        const size_t i = static_cast<size_t>(m * N + n);
        ASSERT_NEAR(y_dnn[i], want, 1e-4 * (1.0 + std::abs(want))) << K << "x" << N << " oneDNN";
        ASSERT_NEAR(y_loop[i], want, 1e-4 * (1.0 + std::abs(want))) << K << "x" << N << " loop";
      }
    }
  }
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
