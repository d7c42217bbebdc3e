// run_jobs (providers/onednn/common/job_pool.h): every job runs once, and on the OpenMP team a
// job below the team's size runs on the same thread every call, so that the data a caller's
// job k reads each time (the row team's slice of R) stays in one core's cache. move_off takes a
// thread off a core and leaves its affinity as it was.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
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
