// avx512::pack_columns with discard_source (providers/onednn/common/avx512.h): the packed
// matrix is the same as without it, whatever order the rows are taken in, and the source rows
// are given back only where each is read once, in order; unpack_columns reverses it.
// multiply_row_set: the bits of multiply_rows four rows at a time, in either order of the column
// blocks, and products within float rounding of double ones.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "providers/onednn/common/avx512.h"
#include "runtime/core/cpu_isa.h"

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

// The column blocks taken last to first (the row team's every other step) give the same bits.
TEST(MultiplyRowSet, MatchesFourRowsAtATimeAndADoubleProduct) {
  // AVX-512's loops, or under ONEDNN_MAX_CPU_ISA=AVX2 (isa-avx2/) those of avx2_rows.h.
  if (!cpu::has(cpu::Feature::kAvx2))
    GTEST_SKIP() << "multiply_row_set needs AVX2, which this CPU lacks";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  // Widths of whole 64-column blocks and of a last block of 16, 32 or 48; row counts that leave
  // 0-3 rows past the last group of four, up to kRowSet.
  for (const auto& [K, Gp, rows] : {std::array<int64_t, 3>{33, 64, 1},
                                    {200, 208, 7},
                                    {64, 176, kRowSet},
                                    {17, 16, 2},
                                    {128, 1056, 45}}) {
    std::vector<float> src(static_cast<size_t>(Gp * K));
    for (auto& v : src) v = u(rng);
    const auto m = pack_columns(src.data(), K, column_sources(Gp, Gp), K, 1);
    const auto* mp = static_cast<const float*>(m->data);
    auto vectors = [&](int64_t n, int64_t len) {
      std::vector<std::unique_ptr<AlignedBuffer>> v;
      for (int64_t i = 0; i < n; ++i) {
        v.push_back(std::make_unique<AlignedBuffer>(static_cast<size_t>(len) * sizeof(float)));
        auto* f = static_cast<float*>(v.back()->data);
        for (int64_t j = 0; j < len; ++j) f[j] = u(rng);
      }
      return v;
    };
    const auto init = vectors(rows, Gp), in = vectors(rows, K), set = vectors(rows, Gp),
               fours = vectors(rows, Gp), back = vectors(rows, Gp);
    std::vector<const float*> ip, xp;
    std::vector<float*> sp, fp, bp;
    for (int64_t r = 0; r < rows; ++r) {
      ip.push_back(static_cast<const float*>(init[r]->data));
      xp.push_back(static_cast<const float*>(in[r]->data));
      sp.push_back(static_cast<float*>(set[r]->data));
      fp.push_back(static_cast<float*>(fours[r]->data));
      bp.push_back(static_cast<float*>(back[r]->data));
    }
    multiply_row_set(rows, ip.data(), xp.data(), K, mp, Gp, sp.data());
    multiply_row_set(rows, ip.data(), xp.data(), K, mp, Gp, bp.data(), true);
    for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
      const int nr = static_cast<int>(std::min<int64_t>(kRowBlock, rows - r0));
      multiply_rows(nr, ip.data() + r0, xp.data() + r0, K, mp, Gp, fp.data() + r0);
    }
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_EQ(0, std::memcmp(sp[r], fp[r], static_cast<size_t>(Gp) * sizeof(float)))
          << "K " << K << " Gp " << Gp << " row " << r;
      ASSERT_EQ(0, std::memcmp(bp[r], fp[r], static_cast<size_t>(Gp) * sizeof(float)))
          << "backward: K " << K << " Gp " << Gp << " row " << r;
      for (int64_t c = 0; c < Gp; ++c) {
        double want = ip[r][c];
        for (int64_t k = 0; k < K; ++k) want += double{xp[r][k]} * src[c * K + k];
        ASSERT_NEAR(sp[r][c], want, 1e-5 * static_cast<double>(K)) << "row " << r << " col " << c;
      }
    }
  }
}

// unpack_columns puts every source row back where the caller's map says, as pack_columns took
// it: here into a transposed layout (k_stride = rows), with padding columns and a row no column
// takes left alone.
TEST(PackColumns, UnpackingPutsEachRowBackWhereTheMapSays) {
  const int64_t rows = 150, K = 37;
  const std::vector<float> r = random_rows(rows, K);
  // 100 columns over two blocks, the second partial; rows 0..98 in a shuffled order, row 99 and
  // on not taken, and a padding column.
  std::vector<int64_t> sources(100, -1);
  for (int64_t c = 0; c < 99; ++c) sources[static_cast<size_t>(c)] = (c * 37) % 99;
  std::vector<int64_t> row_at(rows, -1);
  for (int64_t s = 0; s < 99; ++s) row_at[static_cast<size_t>(s)] = 98 - s;
  const auto m = pack_columns(r.data(), K, sources, K, 1);
  std::vector<float> out(static_cast<size_t>(rows * K), -7.0f);
  unpack_columns(static_cast<const float*>(m->data), K, sources, row_at, rows, out.data());
  for (int64_t s = 0; s < rows; ++s) {
    for (int64_t k = 0; k < K; ++k) {
      const float want = s < 99 ? r[static_cast<size_t>(s * K + k)] : -7.0f;
      const int64_t at = s < 99 ? 98 - s : s;
      ASSERT_EQ(out[static_cast<size_t>(at + k * rows)], want) << "row " << s << " k " << k;
    }
  }
}

}  // namespace
}  // namespace recur::onednn::avx512

#endif  // RECUR_HAVE_ONEDNN
