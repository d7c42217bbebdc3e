#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "runtime/graph/shape_inference.h"

namespace recur {
namespace {

using Dims = std::optional<std::vector<Dim>>;

Dim fixed(int64_t v) { return Dim{v, ""}; }
Dim sym(const char* s) { return Dim{-1, s}; }

TEST(BroadcastDims, FixedDimsAlignFromTheRight) {
  // numpy: np.broadcast_shapes((2, 1, 4), (3, 1)) == (2, 3, 4)
  auto r = broadcast_dims(Dims{{fixed(2), fixed(1), fixed(4)}}, Dims{{fixed(3), fixed(1)}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->has_value());
  const std::vector<Dim>& d = **r;
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].value, 2);
  EXPECT_EQ(d[1].value, 3);
  EXPECT_EQ(d[2].value, 4);
}

TEST(BroadcastDims, UnknownRankGivesUnknown) {
  auto r = broadcast_dims(std::nullopt, Dims{{fixed(3)}});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST(BroadcastDims, SymbolAgainstOneKeepsTheSymbol) {
  auto r = broadcast_dims(Dims{{sym("batch"), fixed(5)}}, Dims{{fixed(1), fixed(5)}});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((**r)[0].symbol, "batch");
  EXPECT_FALSE((**r)[0].is_fixed());
  EXPECT_EQ((**r)[1].value, 5);
}

TEST(BroadcastDims, SymbolsMeetOtherDims) {
  // A fixed dim other than 1 wins over a symbol; equal symbols stay; different ones are unknown.
  auto r =
      broadcast_dims(Dims{{sym("n"), sym("t"), sym("a")}}, Dims{{fixed(3), sym("t"), sym("b")}});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((**r)[0].value, 3);
  EXPECT_EQ((**r)[1].symbol, "t");
  EXPECT_FALSE((**r)[2].is_fixed());
  EXPECT_EQ((**r)[2].symbol, "");
}

TEST(BroadcastDims, DifferentFixedDimsAreAnError) {
  auto r = broadcast_dims(Dims{{fixed(2), fixed(3)}}, Dims{{fixed(4)}});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace recur
