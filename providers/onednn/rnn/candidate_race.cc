#include "providers/onednn/rnn/candidate_race.h"

#include <algorithm>

namespace recur::onednn {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

Result<RaceResult> race_candidates(std::vector<RaceCandidate> cands, const RaceCallbacks& cb) {
  const size_t n = cands.size();
  std::vector<bool> ok(n);
  for (size_t i = 0; i < n; ++i) ok[i] = cands[i].ok;
  auto standing = [&] { return std::count(ok.begin(), ok.end(), true); };

  double round_ms = 0;
  double best_pass = 1e300;  // the fastest pass of any candidate so far
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i]) continue;
    Result<double> t = cb.warm_up(i);
    if (!t.ok()) {
      ok[i] = false;
      continue;
    }
    round_ms += *t;
    best_pass = std::min(best_pass, *t);
  }

  // Several passes in a row per candidate, about 60 ms of them; the median, not the minimum:
  // a busy machine makes a multi-threaded pass's best case rare, and the median is what runs
  // see.
  const int per = static_cast<int>(std::clamp(60.0 / std::max(round_ms, 1e-3), 2.0, 8.0));
  const double budget_ms = std::max(300.0, 10.0 * round_ms);
  const double start = cb.now_ms();
  std::vector<std::vector<double>> times(n);
  int rounds = 0;
  for (int r = 0; r < 4; ++r) {
    for (size_t i = 0; i < n; ++i) {
      if (!ok[i]) continue;
      RECUR_RETURN_IF_ERROR(cb.pass(i).status());
      for (int k = 0; k < per; ++k) {
        RECUR_ASSIGN_OR_RETURN(double ms, cb.pass(i));
        times[i].push_back(ms);
        best_pass = std::min(best_pass, ms);
        // A pass five times the fastest one seen: this candidate stalls (a multi-threaded one
        // on a busy machine) and is out at once rather than after more such passes.
        if (!cands[i].single && ms > 5.0 * best_pass + 0.05 && standing() > 1) {
          ok[i] = false;
          break;
        }
      }
    }
    rounds = r + 1;
    double best_med = 1e300;
    for (size_t i = 0; i < n; ++i) {
      if (ok[i]) best_med = std::min(best_med, median_of(times[i]));
    }
    // The candidate with the best median keeps its place (its best pass is at most its
    // median), so this never empties the race.
    for (size_t i = 0; i < n; ++i) {
      if (ok[i] && *std::min_element(times[i].begin(), times[i].end()) > 2.0 * best_med) {
        ok[i] = false;
      }
    }
    if (rounds >= 2 && cb.now_ms() - start > budget_ms) break;
  }
  RaceResult out;
  out.ok = ok;
  out.reps = rounds * per;
  out.med.assign(n, 1e300);
  for (size_t i = 0; i < n; ++i) {
    if (ok[i]) out.med[i] = median_of(times[i]);
  }
  return out;
}

}  // namespace recur::onednn
