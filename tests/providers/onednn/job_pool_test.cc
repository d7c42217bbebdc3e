// run_jobs (providers/onednn/common/job_pool.h): every job runs once, and on the OpenMP team a
// job below the team's size runs on the same thread every call, so that the data a caller's
// job k reads each time (the row team's slice of R) stays in one core's cache.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
