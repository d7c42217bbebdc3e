// The int8 LSTM's choice between batch slices and a team of threads (team_tuner.h), fed made-up
// run times: it tries each way, keeps the faster, tries the other now and then, backs off while
// that keeps losing, and follows a change of the machine's load.
#include "providers/onednn/rnn/team_tuner.h"

#include <gtest/gtest.h>

namespace recur::onednn {
namespace {

// Runs one pick and records `ms_team` or `ms_slices` for it (per 1 row-step); returns the pick.
bool step(TeamTuner& t, double ms_team, double ms_slices) {
  const bool team = t.pick();
  t.record(team, team ? ms_team : ms_slices, 1.0);
  return team;
}

TEST(TeamTuner, TriesBothKeepsTheFasterAndProbesTheOther) {
  TeamTuner t;
  // Each way twice: the first run of each builds its plans and is not timed.
  EXPECT_TRUE(step(t, 1000.0, 1000.0));
  EXPECT_TRUE(step(t, 46.0, 54.0));
  EXPECT_FALSE(step(t, 46.0, 1000.0));
  EXPECT_FALSE(step(t, 46.0, 54.0));
  // The team is faster: it runs, with a probe of the slices at the 8th run and then every 8
  // while a probe loses, doubling.
  int slices = 0;
  for (int i = 0; i < 60; ++i) slices += step(t, 46.0, 54.0) ? 0 : 1;
  EXPECT_GE(slices, 1);
  EXPECT_LE(slices, 4);  // probes at runs 8, 16, 32 (intervals 8, 16, 32), not more
  // The other core gets busy: the team slows down, and the next probe moves to the slices.
  int team_after = 0;
  for (int i = 0; i < 200; ++i) team_after += step(t, 217.0, 104.0) ? 1 : 0;
  EXPECT_LE(team_after, 12);  // the runs until the probe, then the team's own probes
  // Quiet again: a probe of the team wins it back within the back-off.
  int last_team_run = -1;
  for (int i = 0; i < 600; ++i)
    if (step(t, 46.0, 54.0)) last_team_run = i;
  EXPECT_EQ(last_team_run, 599);
}

TEST(TeamTuner, CostsArePerRowStep) {
  // The same way at two sizes is the same speed: a larger run is not mistaken for a slower way.
  TeamTuner t;
  t.record(t.pick(), 1.0, 1.0);     // team, untimed
  t.record(t.pick(), 10.0, 100.0);  // team: 0.1 per row-step
  t.record(t.pick(), 1.0, 1.0);     // slices, untimed
  const bool slices_pick = t.pick();
  EXPECT_FALSE(slices_pick);
  t.record(slices_pick, 6.0, 50.0);  // slices: 0.12 per row-step
  EXPECT_TRUE(t.pick());
}

}  // namespace
}  // namespace recur::onednn
