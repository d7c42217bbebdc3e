// How the oneDNN RNN kernel times its candidate implementations for a shape bucket: rounds in
// turn (A B C, A B C, ...), dropping the candidates that cannot win. Kept apart from oneDNN so
// that the dropping rules can be tested with scripted timings: a busy machine makes any
// candidate stall, and the rules must still leave one standing.
#pragma once

#include <functional>
#include <vector>

#include "runtime/core/status.h"

namespace recur::onednn {

struct RaceCandidate {
  // One thread, no split: never dropped for a stall (it has no other thread to wait for).
  bool single = false;
  bool ok = true;  // still in the race; false on entry leaves it out
};

struct RaceCallbacks {
  // Builds candidate i's probe and runs it once untimed; an error drops the candidate.
  std::function<Result<double>(size_t)> warm_up;
  // One pass of candidate i, in milliseconds.
  std::function<Result<double>(size_t)> pass;
  // A clock in milliseconds, for the time budget.
  std::function<double()> now_ms;
};

struct RaceResult {
  std::vector<bool> ok;     // the candidates still standing: at least one unless all failed
  std::vector<double> med;  // each one's median pass (1e300 for those out)
  int reps = 0;             // timed passes per standing candidate
};

// Up to four rounds, at least two, within max(300 ms, 10 rounds' time). Each round gives each
// standing candidate one untimed pass (it absorbs the switch from the previous candidate:
// OpenMP threads spin for a while after a region) and a few timed ones. Dropped: a
// multi-threaded candidate whose pass takes five times the fastest pass seen (a stall), and
// after each round any candidate whose best pass is slower than twice the best median. The
// last candidate standing is never dropped. An error from `pass` is returned.
Result<RaceResult> race_candidates(std::vector<RaceCandidate> cands, const RaceCallbacks& cb);

}  // namespace recur::onednn
