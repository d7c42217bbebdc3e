// run_jobs (providers/onednn/common/job_pool.h): every job runs once, and on the OpenMP team a
// job below the team's size runs on the same thread every call, so that the data a caller's
// job k reads each time (the row team's slice of R) stays in one core's cache. move_off takes a
// thread off a core and leaves its affinity as it was. run_rounds keeps each round whole.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "providers/onednn/common/job_pool.h"

namespace recur::onednn {
namespace {

TEST(RunJobs, EveryJobRunsOnce) {
  for (const auto& [n, helpers] : {std::pair<size_t, int>{1, 1}, {2, 1}, {37, 1}, {5, 3}, {3, 8}}) {
    std::vector<std::atomic<int>> runs(n);
    run_jobs(n, helpers, [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "job " << i << " of " << n;
  }
}

TEST(RunJobs, AJobOfTheTeamStaysOnItsThread) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::array<std::thread::id, 2>> calls(300);
  for (auto& ids : calls) {
    run_jobs(2, 1, [&](size_t i) {
      ids[i] = std::this_thread::get_id();
      // Long enough that a helper arriving late would find the second job taken.
      volatile double x = 1;
      for (int k = 0; k < 2000; ++k) x = x * 1.0000001;
    });
  }
  const auto helper =
      std::find_if(calls.begin(), calls.end(), [&](const auto& ids) { return ids[1] != caller; });
  if (helper == calls.end()) GTEST_SKIP() << "the OpenMP team had one thread (OMP_THREAD_LIMIT?)";
  for (size_t c = 0; c < calls.size(); ++c) {
    ASSERT_EQ(calls[c][0], caller) << "call " << c;
    ASSERT_EQ(calls[c][1], (*helper)[1]) << "call " << c;
  }
}

// On a thread of its own, so that the test's thread keeps its affinity whatever happens.
// run_rounds: every job of every round runs once, after every job of the round before (each
// job reads what all of them wrote a round earlier), a job on one thread in every round, and
// inside a parallel region (a round per run_jobs) the same.
TEST(RunRounds, EachRoundSeesTheLastWholeAndAJobKeepsItsThread) {
  for (const auto& [n, helpers] : {std::pair<size_t, int>{1, 1}, {2, 1}, {2, 3}, {5, 2}, {7, 1}}) {
    for (bool nested : {false, true}) {
      const int64_t rounds = 200;
      std::vector<std::vector<int64_t>> v(rounds + 1, std::vector<int64_t>(n, 0));
      std::vector<std::vector<std::thread::id>> who(rounds, std::vector<std::thread::id>(n));
      std::vector<std::atomic<int>> runs(static_cast<size_t>(rounds) * n);
      auto go = [&] {
        run_rounds(rounds, n, helpers, [&](int64_t r, size_t i) {
          int64_t sum = 0;
          for (int64_t x : v[static_cast<size_t>(r)]) sum += x;
          v[static_cast<size_t>(r) + 1][i] = sum % 1000003 + static_cast<int64_t>(i) + 1;
          who[static_cast<size_t>(r)][i] = std::this_thread::get_id();
          runs[static_cast<size_t>(r) * n + i].fetch_add(1);
        });
      };
      if (nested) {  // from a job of run_jobs, on its OpenMP team
        run_jobs(2, 1, [&](size_t i) {
          if (i == 0) go();
        });
      } else {
        go();
      }
      std::vector<int64_t> want(n, 0);
      for (int64_t r = 0; r < rounds; ++r) {
        int64_t sum = 0;
        for (int64_t x : want) sum += x;
        for (size_t i = 0; i < n; ++i) want[i] = sum % 1000003 + static_cast<int64_t>(i) + 1;
      }
      const std::string what = std::to_string(n) + " jobs, " + std::to_string(helpers) +
                               " helpers" + (nested ? ", nested" : "");
      EXPECT_EQ(v[rounds], want) << what;
      for (size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k].load(), 1) << what << ", " << k;
      if (nested) continue;
      for (size_t i = 0; i < n; ++i)
        for (int64_t r = 1; r < rounds; ++r)
          ASSERT_EQ(who[static_cast<size_t>(r)][i], who[0][i]) << what << ", job " << i;
    }
  }
}

TEST(MoveOff, LeavesTheCoreAndRestoresTheAffinity) {
  cpu_set_t before, after;
  int from = -1, to = -1;
  std::thread([&] {
    if (sched_getaffinity(0, sizeof before, &before) != 0 || CPU_COUNT(&before) < 2) return;
    from = sched_getcpu();
    move_off(from);
    to = sched_getcpu();
    sched_getaffinity(0, sizeof after, &after);
  }).join();
  if (from < 0) GTEST_SKIP() << "this process may run on one core only";
  EXPECT_NE(to, from);
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the affinity was not restored";
}

TEST(MoveOff, StaysOnTheOnlyCoreItMayRunOn) {
  cpu_set_t one, after;
  int cpu = -1, now = -1;
  std::thread([&] {
    cpu = sched_getcpu();
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      cpu = -1;
      return;
    }
    move_off(cpu);
    now = sched_getcpu();
    sched_getaffinity(0, sizeof after, &after);
  }).join();
  if (cpu < 0) GTEST_SKIP() << "the affinity could not be set";
  EXPECT_EQ(now, cpu);
  EXPECT_TRUE(CPU_EQUAL(&one, &after));
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
