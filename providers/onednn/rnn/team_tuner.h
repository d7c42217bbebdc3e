// The int8 LSTM kernel's choice, run by run, between batch slices and a team of threads
// sharing one primitive (rnn_int8.cc), kept apart so that its policy can be tested alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>

namespace recur::onednn {

// How a run with threads to share uses them: one primitive per batch slice and direction, each
// on one thread (`slices`), or one primitive per direction on a team of threads (`team`). They
// compute the same bits. oneDNN's int8 LSTM pays a cost per step that does not shrink with the
// rows (reading all of R: 4 MiB for lstm_large), so slices pay it once each, and a team splits
// R's columns instead: on a quiet machine lstm_large ran 46 ms as a team against 54 as slices
// (2 threads). But a team waits at every step for its slowest thread: with a busy loop on the
// other core it took 217 ms against the slices' 104. Neither rule holds on every machine, so
// with onednn.threading=auto, where R is more than one core's L2 holds (below that the slices
// won: lstm_med ran 1.13x slower as a team), the runs time both ways and take the faster per
// row-step, trying the other again now and then (every 8 runs, backing off to every 256 while
// it keeps losing).
// Deterministic sessions take slices without timing (the bits would be the same; the choice
// may still not depend on a timing).
class TeamTuner {
 public:
  // True: run this one as a team.
  bool pick() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const bool m : {true, false})
      if (timed_[m] == 0) return m;  // each way once untimed (it builds its plans), then timed
    const bool best = cost_[1] < cost_[0];
    if (runs_ >= next_probe_) {
      next_probe_ = runs_ + interval_;
      return !best;
    }
    return best;
  }
  // A run as a team (or as slices) took `ms` for `units` row-steps.
  void record(bool team, double ms, double units) {
    std::lock_guard<std::mutex> lock(mu_);
    ++runs_;
    if (!built_[team]) {
      built_[team] = true;  // that run built the plans: not a measure of the way
      return;
    }
    const double c = ms / std::max(units, 1.0);
    // A probe of the slower way replaces its old cost, which may date from another load of
    // the machine; the way in use averages its runs.
    const bool probe = timed_[!team] > 0 && cost_[team] > cost_[!team];
    cost_[team] = timed_[team] == 0 || probe ? c : 0.5 * cost_[team] + 0.5 * c;
    ++timed_[team];
    if (probe) interval_ = cost_[team] < cost_[!team] ? 8 : std::min<int64_t>(2 * interval_, 256);
  }

 private:
  std::mutex mu_;
  bool built_[2] = {false, false};
  int64_t timed_[2] = {0, 0};
  double cost_[2] = {0.0, 0.0};  // ms per row-step: [0] slices, [1] team
  int64_t runs_ = 0, next_probe_ = 8, interval_ = 8;
};

}  // namespace recur::onednn
