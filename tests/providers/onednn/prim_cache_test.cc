// The plan cache of the oneDNN kernels (providers/onednn/common/prim_cache.h): full, it lets go
// of the plan used least recently, so that a model fed many sizes keeps those that come back.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include "providers/onednn/common/prim_cache.h"

namespace recur::onednn {
namespace {

TEST(PrimCache, AFullCacheDropsTheLeastRecentlyUsed) {
  PrimCache<int, int> cache;
  int made = 0;
  auto get = [&](int key) {
    auto v = cache.get(key, [&]() -> Result<int> {
      ++made;
      return key * 10;
    });
    EXPECT_TRUE(v.ok());
    return v.ok() ? **v : -1;
  };
  const int n = static_cast<int>(PrimCache<int, int>::kCapacity);
  for (int k = 0; k < n; ++k) EXPECT_EQ(get(k), k * 10);
  EXPECT_EQ(made, n);
  EXPECT_EQ(get(0), 0);  // used again: now the most recent
  EXPECT_EQ(made, n);
  EXPECT_EQ(get(n), n * 10);  // full: key 1, the least recently used, goes
  EXPECT_EQ(made, n + 1);
  EXPECT_EQ(get(0), 0);  // kept
  EXPECT_EQ(made, n + 1);
  EXPECT_EQ(get(1), 10);  // made again
  EXPECT_EQ(made, n + 2);
}

// A failed make leaves nothing behind: the next get makes it again.
TEST(PrimCache, AFailedMakeIsNotKept) {
  PrimCache<int, int> cache;
  int made = 0;
  auto fail = [&]() -> Result<int> {
    ++made;
    return Status(ErrorCode::kInvalidArgument, "no");
  };
  EXPECT_FALSE(cache.get(3, fail).ok());
  EXPECT_FALSE(cache.get(3, fail).ok());
  EXPECT_EQ(made, 2);
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
