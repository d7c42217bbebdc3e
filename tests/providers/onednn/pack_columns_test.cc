// avx512::pack_columns with discard_source (providers/onednn/common/avx512.h): the packed
// matrix is the same as without it, whatever order the rows are taken in, and the source rows
// are given back only where each is read once, in order.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "providers/onednn/common/avx512.h"

namespace recur::onednn::avx512 {
namespace {

std::vector<float> random_rows(int64_t rows, int64_t K) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);  // never zero: zeros mark discarded pages
  std::vector<float> v(static_cast<size_t>(rows * K));
  for (auto& x : v) x = u(rng);
  return v;
}

std::vector<float> packed(const std::unique_ptr<AlignedBuffer>& b, int64_t K, int64_t Gp) {
  const auto* p = static_cast<const float*>(b->data);
  return std::vector<float>(p, p + K * Gp);
}

TEST(PackColumns, DiscardingTheSourceGivesTheSameMatrix) {
  if (!have_avx512()) GTEST_SKIP() << "pack_columns is built for AVX-512, which this CPU lacks";
  // A GRU's R [3H][H] with H = 256 (256 KiB): z and r rows into one matrix, h rows into another,
  // as the small-cell GRU packs them, each row read once.
  const int64_t H = 256, K = H;
  const std::vector<float> r = random_rows(3 * H, K);
  const std::vector<int64_t> zr = column_sources(2 * H, 2 * H);
  const std::vector<int64_t> h = column_sources(H + 16, H, 2 * H);
  std::vector<float> src = r;
  const auto zr_kept = packed(pack_columns(r.data(), K, zr, K, 1), K, 2 * H);
  const auto h_kept = packed(pack_columns(r.data(), K, h, K, 1), K, H + 16);
  EXPECT_EQ(packed(pack_columns(src.data(), K, zr, K, 1, true), K, 2 * H), zr_kept);
  EXPECT_EQ(packed(pack_columns(src.data(), K, h, K, 1, true), K, H + 16), h_kept);
  EXPECT_GT(std::count(src.begin(), src.end(), 0.0f), 0) << "nothing was given back";
}

TEST(PackColumns, RowsOutOfOrderOrTakenTwiceAreKept) {
  if (!have_avx512()) GTEST_SKIP() << "pack_columns is built for AVX-512, which this CPU lacks";
  const int64_t rows = 256, K = 256;
  const std::vector<float> r = random_rows(rows, K);
  std::vector<int64_t> reversed(rows), twice(2 * rows);
  for (int64_t c = 0; c < rows; ++c) reversed[static_cast<size_t>(c)] = rows - 1 - c;
  for (int64_t c = 0; c < 2 * rows; ++c) twice[static_cast<size_t>(c)] = c / 2;
  for (const auto& sources : {reversed, twice}) {
    std::vector<float> src = r;
    const auto Gp = static_cast<int64_t>(sources.size());
    EXPECT_EQ(packed(pack_columns(src.data(), K, sources, K, 1, true), K, Gp),
              packed(pack_columns(r.data(), K, sources, K, 1), K, Gp));
    EXPECT_EQ(src, r);
  }
}

}  // namespace
}  // namespace recur::onednn::avx512

#endif  // RECUR_HAVE_ONEDNN
