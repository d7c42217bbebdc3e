// Whether a team's long RNN pass waits for a core another process took (rnn_run.cc,
// run_shared_blocks; row_team.cc), kept apart so that its policy can be tested alone.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace recur::onednn {

// The steady clock in nanoseconds, the guard's time base.
inline int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A team meets at a barrier every step, and a member whose core another process takes arrives
// a scheduler time slice late. busy_cores.h shrinks teams while /proc/stat shows other
// processes busy, but a burst shorter than its window (a test binary of a few tens of
// milliseconds under `ctest -j2`) stalls a team and never shows there: a pass of 1000 steps of
// an LSTM of 256 units over one row took 420 ms in team blocks against about 25 quiet. The
// blocks' own times say it: a block that took kStallFactor times the best cost per step that
// blocks of as many rows have reached ends the team for the rest of its pass, and long passes
// keep one thread for a pause that doubles while stalls recur (up to kMaxPauseNs) and is back
// to kFirstPauseNs after a block that ran clean.
class StallGuard {
 public:
  static constexpr double kStallFactor = 4.0;
  static constexpr int64_t kFirstPauseNs = 1'000'000'000;
  static constexpr int64_t kMaxPauseNs = 16'000'000'000;
  // Rows up to this many are judged (a team of one row to a few rows a thread); the cost per
  // step of more rows is not compared.
  static constexpr int64_t kMaxRows = 8;
  // Shorter blocks (a pass's last few steps) are not judged: a block's fixed cost weighs more.
  static constexpr int64_t kMinSteps = 32;

  // Whether long passes keep one thread at `now_ns` (steady clock).
  bool paused(int64_t now_ns) const {
    return now_ns < pause_until_.load(std::memory_order_relaxed);
  }

  // A block of `steps` steps over `rows` rows on the whole team took `ns`, ending at `now_ns`.
  // True: it stalled, and the pass should end its team.
  bool record(int64_t rows, int64_t steps, int64_t ns, int64_t now_ns) {
    if (rows < 1 || rows > kMaxRows || steps < kMinSteps) return false;
    const double cost = static_cast<double>(ns) / static_cast<double>(steps);
    std::lock_guard<std::mutex> lock(mu_);
    double& best = best_[static_cast<size_t>(rows - 1)];
    if (best > 0 && cost > kStallFactor * best) {
      pause_until_.store(now_ns + pause_ns_, std::memory_order_relaxed);
      pause_ns_ = std::min(2 * pause_ns_, kMaxPauseNs);
      return true;
    }
    best = best > 0 ? std::min(best, cost) : cost;
    pause_ns_ = kFirstPauseNs;
    return false;
  }

 private:
  std::mutex mu_;
  std::array<double, kMaxRows> best_{};  // ns per step, by rows
  int64_t pause_ns_ = kFirstPauseNs;
  std::atomic<int64_t> pause_until_{0};
};

}  // namespace recur::onednn
