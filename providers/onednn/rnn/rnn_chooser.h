// How the oneDNN RNN kernel picks an implementation per bucket of shapes: the weights format
// and the threading, timed on synthetic probes (candidate_race.h runs the race) unless the
// options fix them or ask for deterministic results. The steps are RnnKernel members
// (rnn_kernel.h), defined in rnn_chooser.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"

namespace recur::onednn::rnn {

// Implementation and threading are chosen per bucket of shapes: N, and T in four classes (one
// step, up to 16, up to kLongPassSteps, longer); the time segments of unequal sequence lengths
// have buckets of their own.
struct BucketKey {
  int64_t N = 0, I = 0, H = 0;
  int t_class = 0;
  bool segments = false;
  auto tie() const { return std::tie(N, I, H, t_class, segments); }
  bool operator<(const BucketKey& o) const { return tie() < o.tie(); }
};
inline constexpr int64_t kLongPassSteps = 256;
inline int t_class(int64_t T) { return T <= 1 ? 0 : T <= 16 ? 1 : T <= kLongPassSteps ? 2 : 3; }

// How one RNN node runs: the weights format, and either `threads` OpenMP threads inside each
// primitive, or `split` independent jobs (batch slices, or the two directions) run in parallel
// on one thread each. A split has no barrier per time step, so it also holds up when the
// machine is busy.
struct Choice {
  bool any = false;  // format_tag::any weights (brgemm for LSTM/RNN) rather than explicit ldigo
  int threads = 1;
  int split = 1;
  std::string describe(int64_t D) const {
    std::string s = std::string("weights ") + (any ? "any" : "ldigo") + ", ";
    if (split > 1) {
      return s + std::to_string(split) + " threads (" +
             (D == 2 && split == 2 ? "directions in parallel" : "batch split") + ")";
    }
    return s + std::to_string(threads) + (threads > 1 ? " threads (OpenMP)" : " thread");
  }
};

// The candidates of a bucket, and the fixed rule's choice (docs/semantics.md,
// "Reproducibility"), taken when they are not timed: tune off, deterministic(true), or while
// another thread times.
struct Candidates {
  std::vector<Choice> list;
  Choice untimed;
};

// Where a race left its candidates: still standing (ok) and the median pass time (med), over
// `reps` passes of a probe of `steps` time steps.
struct RaceTimes {
  std::vector<bool> ok;
  std::vector<double> med;
  int reps = 0;
  int64_t steps = 0;
};

// The timed winner `win` of a race, or the fixed rule's choice `untimed` where it stood and
// `win` did not beat it by 10%: the rule holds what short probes miss (a team's part of a
// large R staying in each core's L2 over a whole pass). The probes of a GRU of 400 units over
// 8 rows picked a batch split in 1 of 3 tunings, which then ran 31 ms a pass against the
// rule's team's 14.
size_t prefer_rule(const std::vector<Choice>& cands, const Choice& untimed, const RaceTimes& t,
                   size_t win);

// A candidate set up for timing: its primitives and synthetic buffers, per job.
struct ProbeJob {
  RnnPd pd;
  RnnDescs descs;
  std::vector<float> x, y, h0, c0, hn, cn;
  std::shared_ptr<AlignedBuffer> wl, wi;
  std::unique_ptr<AlignedBuffer> scratch;
  std::unordered_map<int, dnnl::memory> args;
};
struct ProbeSet {
  std::vector<ProbeJob> jobs;
  int parallel = 1;      // jobs run on this many threads (the job pool)
  int prim_threads = 1;  // OpenMP threads inside each primitive
  std::vector<float> bias, peep;
};
using ProbeWeights = std::vector<std::pair<dnnl::memory::desc, std::shared_ptr<AlignedBuffer>>>;

// For tests: `hook` runs on the thread that is about to time a bucket, before the timing, so a
// test can hold a tuner back and watch what other runs do meanwhile. Empty: none.
void set_tuning_hook(std::function<void()> hook);

}  // namespace recur::onednn::rnn
