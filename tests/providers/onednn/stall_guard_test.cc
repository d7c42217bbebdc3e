// The judge of a team's long RNN pass (stall_guard.h), fed made-up block times: a block far
// slower per step than the best of as many rows ends the pass's team and pauses long passes on
// one thread, the pause doubles while stalls recur and resets after a clean block, and short
// blocks and many rows are not judged.
#include "providers/onednn/rnn/stall_guard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace recur::onednn {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(StallGuard, ASlowBlockEndsTheTeamAndPausesLongPasses) {
  StallGuard g;
  int64_t now = 10 * kMs;
  // 128 steps in 2.5 ms: the best so far; noise up to 4x that is no stall.
  EXPECT_FALSE(g.record(1, 128, 5 * kMs / 2, now));
  EXPECT_FALSE(g.record(1, 128, 3 * kMs, now));
  EXPECT_FALSE(g.record(1, 128, 9 * kMs, now));
  EXPECT_FALSE(g.paused(now));
  // A block that waited for its team: 50 ms.
  EXPECT_TRUE(g.record(1, 128, 50 * kMs, now));
  EXPECT_TRUE(g.paused(now + 999 * kMs));
  EXPECT_FALSE(g.paused(now + StallGuard::kFirstPauseNs));
}

TEST(StallGuard, ThePauseDoublesWhileStallsRecurAndResetsAfterACleanBlock) {
  StallGuard g;
  EXPECT_FALSE(g.record(2, 64, 2 * kMs, 0));
  int64_t now = 0, pause = StallGuard::kFirstPauseNs;
  for (int i = 0; i < 6; ++i) {
    now += 100 * StallGuard::kMaxPauseNs;  // long after the last pause ended
    ASSERT_TRUE(g.record(2, 64, 40 * kMs, now));
    EXPECT_TRUE(g.paused(now + pause - 1)) << i;
    EXPECT_FALSE(g.paused(now + pause)) << i;
    pause = std::min(2 * pause, StallGuard::kMaxPauseNs);
  }
  now += 100 * StallGuard::kMaxPauseNs;
  EXPECT_FALSE(g.record(2, 64, 2 * kMs, now));
  ASSERT_TRUE(g.record(2, 64, 40 * kMs, now));
  EXPECT_FALSE(g.paused(now + StallGuard::kFirstPauseNs));
}

TEST(StallGuard, EachRowCountHasItsOwnBestAndShortBlocksAreNotJudged) {
  StallGuard g;
  EXPECT_FALSE(g.record(1, 128, 2 * kMs, 0));
  // Eight rows cost more a step than one: not a stall of one row's team.
  EXPECT_FALSE(g.record(8, 128, 12 * kMs, 0));
  EXPECT_FALSE(g.record(8, 128, 13 * kMs, 0));
  // A pass's last few steps, or rows past kMaxRows, are never judged.
  EXPECT_FALSE(g.record(1, StallGuard::kMinSteps - 1, 100 * kMs, 0));
  EXPECT_FALSE(g.record(StallGuard::kMaxRows + 1, 128, 1000 * kMs, 0));
  EXPECT_FALSE(g.record(0, 128, 1000 * kMs, 0));
  EXPECT_FALSE(g.paused(0));
  EXPECT_TRUE(g.record(8, 128, 60 * kMs, 0));
}

}  // namespace
}  // namespace recur::onednn
