#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/rnn/candidate_race.h"
#include "providers/onednn/rnn/rnn_kernel.h"

namespace recur::onednn::rnn {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

std::vector<float> pattern(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>(static_cast<int>(i * 7919 % 17) - 8);
  return v;
}

// The weights formats to try: explicit ldigo (false) and format_tag::any (true). Weights that
// arrive per run are repacked to ldigo only.
std::vector<bool> weights_formats(bool const_weights, ImplChoice impl) {
  if (!const_weights || impl == ImplChoice::kLdigo) return {false};
  if (impl == ImplChoice::kAny) return {true};
  return {false, true};
}

bool is_omp(const Choice& c) { return c.threads > 1; }
bool is_split(const Choice& c) { return c.split > 1; }
bool is_single(const Choice& c) { return c.threads == 1 && c.split == 1; }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The fastest candidate still standing that satisfies `pred`; cands.size() if none.
template <class Pred>
size_t best_where(const std::vector<Choice>& cands, const RaceTimes& t, Pred pred) {
  size_t b = cands.size();
  for (size_t i = 0; i < cands.size(); ++i)
    if (t.ok[i] && pred(cands[i]) && (b == cands.size() || t.med[i] < t.med[b])) b = i;
  return b;
}

std::string describe_times(const std::vector<Choice>& cands, const RaceTimes& t) {
  std::string d;
  char buf[160];
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!t.ok[i]) continue;
    const Choice& c = cands[i];
    std::snprintf(buf, sizeof buf, "%s%s/%s %.3g ms", d.empty() ? "" : ", ",
                  c.any ? "any" : "ldigo",
                  c.split > 1 ? ("split" + std::to_string(c.split)).c_str()
                              : (std::to_string(c.threads) + "t").c_str(),
                  t.med[i]);
    d += buf;
  }
  return "median of " + std::to_string(t.reps) + " at T=" + std::to_string(t.steps) + ": " + d;
}

// A choice as the tuning cache holds it.
std::string encode(const Choice& c) {
  return std::string("any=") + (c.any ? "1" : "0") + ",threads=" + std::to_string(c.threads) +
         ",split=" + std::to_string(c.split);
}

}  // namespace

size_t prefer_rule(const std::vector<Choice>& cands, const Choice& untimed, const RaceTimes& t,
                   size_t win) {
  for (size_t i = 0; i < cands.size() && win < cands.size(); ++i) {
    const Choice& c = cands[i];
    if (c.any == untimed.any && c.threads == untimed.threads && c.split == untimed.split &&
        t.ok[i] && t.med[win] > 0.9 * t.med[i])
      return i;
  }
  return win;
}

namespace {

// The winner of a race; cands.size() if none ran.
size_t pick_winner(const std::vector<Choice>& cands, const RaceTimes& t) {
  size_t win = cands.size();
  for (size_t i = 0; i < cands.size(); ++i)
    if (t.ok[i] && (win == cands.size() || t.med[i] < t.med[win])) win = i;
  if (win == cands.size()) return win;
  // OpenMP threads inside the primitive synchronise several times per time step, and on a
  // busy machine each wait can last a scheduler tick (measured: 1.5 s instead of 22 ms for
  // lstm_med). Unless a step is long enough (1 ms) for such a wait to matter little, they
  // must beat every other candidate by 15%, else by 5%.
  if (is_omp(cands[win])) {
    const size_t other = best_where(cands, t, [&](const Choice& c) { return !is_omp(c); });
    const double step_ms = t.med[win] / static_cast<double>(t.steps);
    const double need = step_ms >= 1.0 ? 0.95 : 0.85;
    if (other != cands.size() && t.med[win] > need * t.med[other]) win = other;
  }
  if (!is_omp(cands[win])) {
    // A split costs at worst about one thread: the caller runs every job a helper has not
    // started. So it is kept unless clearly slower than one thread, which a probe taken
    // while another process held the second core would show as a tie.
    const size_t split = best_where(cands, t, is_split);
    const size_t single = best_where(cands, t, is_single);
    if (split != cands.size() && (single == cands.size() || t.med[split] <= 1.05 * t.med[single])) {
      win = split;
      // Steps of a millisecond or more: OpenMP's barriers cost little there, while each job
      // of a split streams every weight matrix through the shared cache, which a probe at a
      // shorter T understates (lstm_large at 2 threads: equal in the probe, OpenMP 15%
      // faster in runs). The split must then be clearly faster.
      const size_t omp = best_where(cands, t, is_omp);
      if (omp != cands.size() && t.med[omp] / static_cast<double>(t.steps) >= 1.0 &&
          t.med[omp] <= 1.05 * t.med[split])
        win = omp;
    } else if (single != cands.size()) {
      win = single;
    }
  }
  return win;
}

}  // namespace

Choice RnnKernel::for_busy_cores(Choice c, CoreLease& lease) const {
  int& width = c.split > 1 ? c.split : c.threads;
  lease.acquire(width, opts_.team().shrink);
  if (lease.threads() < width) count_smaller_team_run();
  width = lease.threads();
  return c;
}

Jobs RnnKernel::jobs_for(const Choice& c, int64_t N) const {
  Jobs jobs;
  int64_t slices = 1;
  if (c.split > 1) slices = std::min<int64_t>(N, D() == 2 ? std::max(1, c.split / 2) : c.split);
  for (int d = 0; d < D(); ++d) {
    for (int64_t s = 0; s < slices; ++s) jobs.push_back({d, N * s / slices, N * (s + 1) / slices});
  }
  return jobs;
}

// Candidate `c` set up on a probe of tp steps and N rows, with synthetic data (the timing does
// not depend on values), ready to be timed pass after pass. `weights` holds zero weights per
// format, shared between candidates.
Result<std::unique_ptr<ProbeSet>> RnnKernel::prepare_probe(const Choice& c, int64_t tp, int64_t N,
                                                           int64_t I, int64_t H,
                                                           ProbeWeights& weights) const {
  const Jobs jobs = jobs_for(c, N);
  auto set = std::make_unique<ProbeSet>();
  set->jobs.resize(jobs.size());
  set->parallel = c.split > 1 ? c.split : 1;
  set->prim_threads = c.split > 1 ? 1 : c.threads;
  set->bias = pattern(static_cast<size_t>(geom_.bias_gates() * H), 0.01f);
  set->peep = pattern(static_cast<size_t>(3 * H), 0.01f);
  // Some formats (rnn_packed) carry a header: fill them by a reorder, never by memset. One
  // thread: an OpenMP team would keep spinning on the core a split's helper needs.
  auto weights_for = [&](const memory::desc& md, int64_t in) {
    for (auto& [d, b] : weights)
      if (d == md) return b;
    auto buf = std::make_shared<AlignedBuffer>(md.get_size());
    const memory::desc plain({1, 1, in, geom_.gates(), H}, DT::f32, Tag::ldigo);
    std::vector<float> zeros(plain.get_size() / sizeof(float), 0.0f);
    ThreadScope scope(1);
    memory src = make_memory(plain, zeros.data());
    memory dst = make_memory(md, buf->data);
    dnnl::reorder(src, dst).execute(thread_stream(), src, dst);
    thread_stream().wait();
    weights.emplace_back(md, buf);
    return buf;
  };
  Status st = dnnl_try(node_.describe() + ": probe", [&] {
    for (size_t i = 0; i < jobs.size(); ++i) {
      ProbeJob& p = set->jobs[i];
      const int64_t n = jobs[i].n1 - jobs[i].n0;
      const ShapeKey k{
          tp, n, I, H, n, false, Mode::kPacked, true, true, 0, c.any, set->prim_threads};
      p.descs = descs_for(k);
      p.pd = create_pd(p.descs, 0, false, set->prim_threads);
      p.x = pattern(static_cast<size_t>(tp * n * I), 0.05f);
      p.y.resize(static_cast<size_t>(tp * n * H));
      p.h0 = pattern(static_cast<size_t>(n * H), 0.05f);
      p.c0 = p.h0;
      p.hn.resize(p.h0.size());
      p.cn.resize(p.h0.size());
      p.wl = weights_for(p.pd.weights_layer, I);
      p.wi = weights_for(p.pd.weights_iter, H);
      p.scratch = std::make_unique<AlignedBuffer>(p.pd.scratchpad.get_size());
      p.args = {{DNNL_ARG_SRC_LAYER, make_memory(p.descs.src_layer, p.x.data())},
                {DNNL_ARG_SRC_ITER, make_memory(p.descs.src_iter, p.h0.data())},
                {DNNL_ARG_WEIGHTS_LAYER, make_memory(p.pd.weights_layer, p.wl->data)},
                {DNNL_ARG_WEIGHTS_ITER, make_memory(p.pd.weights_iter, p.wi->data)},
                {DNNL_ARG_BIAS, make_memory(p.descs.bias, set->bias.data())},
                {DNNL_ARG_DST_LAYER, make_memory(p.descs.dst_layer, p.y.data())},
                {DNNL_ARG_DST_ITER, make_memory(p.descs.dst_iter, p.hn.data())},
                {DNNL_ARG_SCRATCHPAD, make_memory(p.pd.scratchpad, p.scratch->data)}};
      if (spec_.cell == RnnCell::kLstm) {
        p.args[DNNL_ARG_SRC_ITER_C] = make_memory(p.descs.src_iter_c, p.c0.data());
        p.args[DNNL_ARG_DST_ITER_C] = make_memory(p.descs.dst_iter_c, p.cn.data());
        if (has_peephole())
          p.args[DNNL_ARG_WEIGHTS_PEEPHOLE] =
              make_memory(p.descs.weights_peephole, set->peep.data());
      }
    }
  });
  RECUR_RETURN_IF_ERROR(st);
  return set;
}

// The time of one pass (every direction) of a prepared candidate.
Result<double> RnnKernel::time_probe(ProbeSet& set) const {
  auto once = [&](size_t i) {
    return dnnl_try(node_.describe() + ": probe run", [&] {
      ThreadScope scope(set.prim_threads);
      set.jobs[i].pd.primitive.execute(thread_stream(), set.jobs[i].args);
      thread_stream().wait();
    });
  };
  const auto t0 = std::chrono::steady_clock::now();
  RECUR_RETURN_IF_ERROR(run_parallel(set.jobs.size(), set.parallel, once));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

std::mutex& hook_mu() {
  static std::mutex mu;
  return mu;
}
std::function<void()>& hook() {
  static std::function<void()> h;
  return h;
}

}  // namespace

void set_tuning_hook(std::function<void()> h) {
  std::lock_guard<std::mutex> lock(hook_mu());
  hook() = std::move(h);
}

// Timing a bucket takes up to seconds, so by default it never happens: a bucket takes the
// tuning cache's entry, else the rule (candidates(), tabled in docs/semantics.md). With
// onednn.tune=1 a bucket the cache lacks is timed where it is first chosen (at load for a
// static shape); with onednn.tune=lazy the load takes the rule without keeping it, and the
// first run times. Timing runs outside mu_, one bucket at a time per kernel (tune_mu_, so
// that two races do not time each other), and a run that finds the kernel busy timing goes
// on with the rule's choice instead of waiting: only the tuner's result is kept. `note` is
// non-null only when the session is being created (prepare_static_shape).
Result<Choice> RnnKernel::choose(const BucketKey& bucket, int64_t T, std::string* note) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = choices_.find(bucket);
    if (it != choices_.end()) return it->second;
  }
  const Candidates cands = candidates(bucket, T);
  auto keep = [&](const Choice& c, const char* why) {
    std::lock_guard<std::mutex> lock(mu_);
    choices_.emplace(bucket, c);
    report_choice(bucket, T, c, why, note);
    return c;
  };
  if (opts_.deterministic) return keep(cands.untimed, "fixed rule, deterministic");
  if (cands.list.size() == 1) return keep(cands.untimed, "only candidate");
  if (auto cached = cached_choice(bucket, cands)) return keep(*cached, "tuning cache");
  using Tune = OnednnOptions::Tune;
  if (opts_.tune == Tune::kOff) return keep(cands.untimed, "untimed rule");
  if (opts_.tune == Tune::kLazy && note) {
    report_choice(bucket, T, cands.untimed, "untimed rule until the first run times it", note);
    return cands.untimed;
  }
  std::unique_lock<std::mutex> tuning(tune_mu_, std::try_to_lock);
  if (!tuning.owns_lock()) return cands.untimed;
  {
    // Another tuner may have finished this bucket between the two locks.
    std::lock_guard<std::mutex> lock(mu_);
    auto it = choices_.find(bucket);
    if (it != choices_.end()) return it->second;
  }
  {
    std::function<void()> h;
    {
      std::lock_guard<std::mutex> lock(hook_mu());
      h = hook();
    }
    if (h) h();
  }
  std::string detail;
  RECUR_ASSIGN_OR_RETURN(Choice best, timed_choice(cands.list, cands.untimed, bucket, T, &detail));
  // Written now, once per bucket and after seconds of timing, rather than per run.
  if (opts_.cache) opts_.cache->record(cache_key(bucket), encode(best));
  std::lock_guard<std::mutex> lock(mu_);
  choices_[bucket] = best;
  report_choice(bucket, T, best, detail, note);
  return best;
}

std::string RnnKernel::cache_key(const BucketKey& bucket) const {
  static const char* const kDirs[] = {"forward", "reverse", "bidirectional"};
  static const char* const kImpl[] = {"auto", "any", "ldigo"};
  static const char* const kThreading[] = {"auto", "single", "omp", "split"};
  // The compute precision, not the model's dtype (always f32 here): a bf16 kernel has other
  // winners, and its entries must never be taken for fp32 ones. A node that declined bf16 runs
  // fp32 and shares the fp32 entries; int8 LSTMs run rnn_int8, which does not time.
  return std::string("onednn.rnn;cell=") + spec_.cell_name() +
         ";dir=" + kDirs[static_cast<int>(spec_.direction)] + ";dtype=" + (bf16_ ? "bf16" : "f32") +
         ";N=" + std::to_string(bucket.N) + ";I=" + std::to_string(bucket.I) +
         ";H=" + std::to_string(bucket.H) + ";T=" + std::to_string(bucket.t_class) +
         ";segments=" + (bucket.segments ? "1" : "0") +
         ";threads=" + std::to_string(opts_.max_threads) +
         ";impl=" + kImpl[static_cast<int>(opts_.impl)] +
         ";threading=" + kThreading[static_cast<int>(opts_.threading)] +
         ";const_weights=" + (const_weights_ ? "1" : "0") +
         ";peephole=" + (has_peephole() ? "1" : "0");
}

std::optional<Choice> RnnKernel::cached_choice(const BucketKey& bucket,
                                               const Candidates& cands) const {
  if (!opts_.cache) return std::nullopt;
  const std::optional<std::string> v = opts_.cache->find(cache_key(bucket));
  if (!v) return std::nullopt;
  for (const Choice& c : cands.list)
    if (encode(c) == *v) return c;
  return std::nullopt;
}

Candidates RnnKernel::candidates(const BucketKey& bucket, int64_t T) const {
  const int64_t N = bucket.N, I = bucket.I, H = bucket.H;
  const int maxt = std::max(1, opts_.max_threads);
  const std::vector<bool> formats = weights_formats(const_weights_, opts_.impl);
  // Threads cannot pay for their synchronisation on a pass this small.
  const double pass_flops = 2.0 * static_cast<double>(N * T * D()) *
                            static_cast<double>(geom_.gates() * H) * static_cast<double>(I + H);
  const bool tiny = pass_flops < 1e6;
  const bool can_split = maxt > 1 && !bucket.segments && (N >= 2 || D() == 2);
  std::vector<Choice> threading;  // any is filled in below
  auto add = [&](Choice c) { threading.push_back(c); };
  switch (opts_.threading) {
    case ThreadingChoice::kSingle:
      add({false, 1, 1});
      break;
    case ThreadingChoice::kOmp:
      add({false, maxt, 1});
      break;
    case ThreadingChoice::kSplit:
      add(can_split ? Choice{false, 1, maxt} : Choice{false, maxt, 1});
      break;
    case ThreadingChoice::kAuto:
      add({false, 1, 1});
      if (can_split && !tiny) add({false, 1, maxt});
      if (maxt > 1 && !tiny) add({false, maxt, 1});
      break;
  }
  Candidates cands;
  for (const Choice& t : threading)
    for (bool any : formats) cands.list.push_back({any, t.threads, t.split});
  cands.untimed =
      untimed_rule(bucket, T, pass_flops, cands.list.front(), can_split, tiny, formats.size() > 1);
  return cands;
}

// The fixed rule: the choice of a bucket when nothing is timed (docs/semantics.md, "The fixed
// rule"). `first` is the first candidate; `both_formats` whether brgemm and gemm may be chosen.
Choice RnnKernel::untimed_rule(const BucketKey& bucket, int64_t T, double pass_flops,
                               const Choice& first, bool can_split, bool tiny,
                               bool both_formats) const {
  // Without timing (the default, deterministic, or while another thread times): a fixed
  // rule, tabled in docs/semantics.md with the measurements behind it
  // (tools/bench/untuned_vs_tuned.py). Threads cannot pay for their handoff on a pass under
  // kSmallPassFlops (tens of microseconds: models/char_lstm_lm, crnn and rnnoise_gru ran
  // 1.5-2x slower split in two); a split of the batch (or directions) is kept unless steps
  // are long, where OpenMP's team shares each step's GEMM: from kLongStepFlops, 5e7 flops a
  // step, OpenMP ran 1.2x faster than a split on the quiet machine of 2026-11-24 (lstm_med and
  // lstm_peep 1e8: 28.6 against 34.7 ms; gru_lbr0/1 7.5e7: 22-23 against 27.5-28 ms), and
  // level below (rnn_tanh 2.5e7: 7.35 against 7.1-7.9 ms). brgemm (any) loses
  // only with one row per primitive and a hidden size of 64 or more (lstm_stream, H=128:
  // 1.05x gemm's time); from two rows on, or below H=64, timing chose it
  // (models/lstm_basic, relu_rnn_stack, attention_lstm_classifier: 1.2-1.6x faster than gemm
  // at N=2-3; the one-row segments of bilstm_seqlens and packed_bilstm_tagger, H=16 and 24:
  // 1.1x).
  //
  // One row (N = 1, a stream or a single utterance) has no batch to split, and each step is a
  // matrix-vector product over R that is memory-bound on one core: an OpenMP team shares R's
  // columns, each core streaming (and from a few hundred units keeping in its L2) only its
  // part. From kOneRowTeamFlops of recurrent work a step (2*G*H*H per direction) the team
  // wins; below it the per-step barrier costs what it saves. Measured at 2 threads, T = 100,
  // 2026-11-29 (`--set onednn.threading=single|omp`, p50 ms): LSTM H=160 (2e5 flops) 0.54
  // against 0.47, H=192 0.77/0.58, H=400 7.25/2.92, H=768 37.3/18.0; GRU H=192 0.62/0.50,
  // H=400 3.45/1.53; level at LSTM H=128 and GRU H=160 (1.5e5). Two directions on two threads
  // take a direction each up to kOneRowSplitFlops (LSTM H=192: 0.86 split, 1.21 omp, 1.53 one
  // thread; H=256: 1.49/2.08/2.80) and a team above (H=400: 7.66 split, 5.56 omp). A short
  // pass gains as much, so kSmallPassFlops (set for compute-bound passes of many rows) does
  // not apply to one row: a single step (a streaming frame) of LSTM H=256 took 44 us on one
  // thread against 26 on two, H=400 177/104, H=1024 1138/551, GRU H=400 134/67. A team must
  // not be leased for a long pass, though (busy_cores.h): should another process take its
  // second core, every step would wait at the barrier for a time slice (about 6 ms a step,
  // measured beside a busy loop). Past kLongPassSteps run_uniform therefore runs a team's
  // pass in blocks of kTeamBlockSteps that each lease the team again (2026-11-30; until then
  // such a pass kept one thread: an NSNet2-style denoiser, two GRUs of 400, 2 threads, took
  // 9.1 ms at T = 256 and 23.9 at T = 300). The segments of unequal lengths and of a run that
  // may be cancelled lease each segment, but a deadline's latency is bounded by one segment
  // (Cancellation.ShortDeadlineEndsALongRun found a stall there): past kLongPassSteps they,
  // and bf16 passes, which run no blocks, keep no team, and two directions a thread each (a
  // split waits at no barrier).
  constexpr double kLongStepFlops = 5e7;
  constexpr double kSmallPassFlops = 2e7;
  constexpr double kOneRowTeamFlops = 2e5;
  constexpr double kOneRowSplitFlops = 1e6;
  // A few rows of a cell whose R is large: a batch split makes every thread stream all of R
  // each step for a few rows' work, where a team shares its columns (each core's part staying
  // in its L2), as for one row. From kFewRowsTeamBytes of R and at most kFewRowsPerThread rows
  // a thread, 2 threads, T = 100, 2026-11-29 (`--set onednn.threading=omp|split`, the better
  // format of each, p50 ms): LSTM H=256 (R 1 MiB) N=2 1.70/4.78, N=4 2.46/5.06, N=8 3.77/5.62,
  // N=16 level (7.24/7.13); GRU H=400 (1.8 MiB) N=4 4.50/13.98, N=8 7.29/15.99, N=16
  // 14.1/21.0; LSTM H=512 N=4 12.6/23.5, N=8 17.1/25.3; GRU H=256 (768 KiB) N=4 1.79/2.68, N=8
  // 3.02/3.45; LSTM H=192 (576 KiB) N=2 1.07/1.46, N=4 level, N=8 2.56/2.40; LSTM H=160
  // (400 KiB): the split ahead at every N (N=4 1.23/1.04). From kLargeRTeamBytes of R the team
  // wins at any number of rows below kLongStepFlops (2026-11-30, the same command, each
  // threading with the format the rule gives it, omp/split): LSTM H=256 (1 MiB) N=12
  // 3.72/5.81, N=16 4.85/7.17, N=24 6.95/10.41; LSTM H=320 N=16 7.46/12.58, N=28 12.1/14.4;
  // GRU H=400 N=12 6.01/10.11, N=16 7.51/11.6, N=28 13.0/16.9; GRU H=512 N=12 18.6/25.4; GRU
  // H=256 (768 KiB) level at N=12-24 (3.09/2.99, 5.55/5.51). An NSNet2-style denoiser at batch
  // 16 (GRUs of 400): 37.7 -> 24.8 ms, where ONNX Runtime takes 32. Two directions on two
  // threads keep a direction each: each thread streams only its own direction's R.
  constexpr double kFewRowsTeamBytes = 512.0 * 1024;
  constexpr int64_t kFewRowsPerThread = 4;
  constexpr double kLargeRTeamBytes = 1024.0 * 1024;
  const int64_t N = bucket.N, H = bucket.H;
  const int maxt = std::max(1, opts_.max_threads);
  const double step_flops = pass_flops / static_cast<double>(std::max<int64_t>(T, 1));
  const double row_flops = 2.0 * static_cast<double>(geom_.gates() * H) * static_cast<double>(H);
  const double r_bytes = 4.0 * static_cast<double>(geom_.gates() * H) * static_cast<double>(H);
  const bool splits_rows = D() == 1 || maxt > D();
  Choice best = first;
  if (opts_.threading == ThreadingChoice::kAuto && maxt > 1) {
    bool split = false, team = false;
    if (N > 1 && pass_flops >= kSmallPassFlops) {
      split = can_split && step_flops < kLongStepFlops &&
              !(splits_rows && (r_bytes >= kLargeRTeamBytes ||
                                (r_bytes >= kFewRowsTeamBytes && N <= kFewRowsPerThread * maxt)));
      team = !split;
    } else if ((N == 1 || N <= kFewRowsPerThread * maxt) && !tiny &&
               row_flops >= kOneRowTeamFlops) {
      // One row, or a few rows in a pass too short for the first branch (one step of a batch
      // of streams or beams): as memory-bound as one row. One step at 2 threads, p50 us, one
      // thread / team: LSTM H=256 N=2 72/24, N=4 71/31, N=8 87/43; GRU H=400 N=4 139/65;
      // LSTM H=640 N=4 394/231 (an RNN-T prediction network over 4 hypotheses).
      // bf16 runs no blocks (rnn_run.cc, run_uniform): as for segments.
      const bool long_segments =
          (bucket.segments || bf16_) && bucket.t_class >= t_class(kLongPassSteps + 1);
      split = can_split && maxt <= D() && (row_flops < kOneRowSplitFlops || long_segments);
      team = !split && !long_segments;
    }
    best.threads = team ? maxt : 1;
    best.split = split ? maxt : 1;
  }
  if (both_formats) best.any = brgemm_weights(best, bucket);
  return best;
}

// Whether the choice `best` of a bucket takes brgemm (format_tag::any weights) rather than gemm
// (ldigo), where both may run (docs/semantics.md, "The fixed rule").
bool RnnKernel::brgemm_weights(const Choice& best, const BucketKey& bucket) const {
  const int64_t N = bucket.N, H = bucket.H;
  const Jobs jobs = jobs_for(best, N);
  int64_t rows = N;
  for (const Job& j : jobs) rows = std::min(rows, j.n1 - j.n0);
  constexpr int64_t kGemmMinHidden = 64;
  // A vanilla RNN has one gate: with many rows per primitive oneDNN's gemm implementation
  // beats brgemm (rnn_tanh, 16-32 rows: gemm 1.06-1.09x faster), with a few brgemm wins
  // (relu_rnn_stack, 2-3 rows).
  constexpr int64_t kRnnGemmMinRows = 16;
  bool any = (rows >= 2 || H < kGemmMinHidden) && !(geom_.gates() == 1 && rows >= kRnnGemmMinRows);
  // An LSTM of a few rows and many units over two steps or more: gemm (one thread, T = 100,
  // p50 ms, gemm/brgemm: H=256 N=2 2.53/5.33, N=4 4.18/6.21, N=8 6.92/7.79; H=512 N=2
  // 23.5/32.2, N=4 25.1/32.8, N=8 39.9/35.5; at 2 threads in a team H=512 N=8 17.1/18.3;
  // H=192 N=2 1.21/1.46 but level in a team). One step is brgemm's (an RNN-T prediction
  // network, H=640 N=4 T=1: 0.67 against 0.77).
  //
  // On one thread a primitive keeps gemm further, for cells of 192 to 384 units whose input
  // is at least half as wide (2I >= H): up to 8 rows, and 16 for H <= 256 with I >= H (T =
  // 100, median of five alternations of p50 ms, brgemm/gemm, 2026-11-29): I=512 H=256 N=8
  // 13.9/10.6, N=12 15.9/15.0, N=16 21.9/19.3, N=24 29.8/30.2; I=256 H=256 N=8 7.42/6.93,
  // N=16 14.3/12.7; I=1024 H=256 N=16 level; I=384 H=192 N=8 5.56/4.85, N=16 10.8/9.62;
  // I=256 H=320 N=8 12.5/10.9; I=768 H=384 N=8 29.8/26.2, N=16 49.7/51.1; I=128 H=256 N=8
  // 7.49/5.76; H=128 level. oneDNN's gemm implementation multiplies the inputs of all steps
  // by W in one GEMM and only R step by step; brgemm's loses on these few rows what it gains
  // on many, or on an R too large for the core's cache (H=512). With a narrower input W is
  // too small for that to pay: I=64 H=256 N=8 4.26/5.02; I=128 H=384 N=8 13.0/14.7; I=80
  // H=192 N=16 5.04/5.22; and 16 rows of I < H are brgemm's: I=128 H=256 N=16 10.1/10.4,
  // I=192 H=256 N=16 12.2/12.5, two directions of I=128 H=256 N=16 (bilstm) 20.8/22.1.
  //
  // Short passes (2 to 16 steps) likewise on one thread: T=16 I=512 H=256 N=8 2.56/1.78,
  // N=16 4.13/3.42; I=512 H=512 N=4 5.66/4.64; T=8 I=512 H=256 N=4 0.98/0.53, I=256 H=256
  // N=2 0.43/0.26, but I=64 H=256 N=4 0.22/0.23; one step level (T=1 0.19/0.20) and
  // brgemm's for H=640 above. In a team of two a short pass is mixed (T=8: I=512 H=512 N=4
  // 1.35/1.21, I=512 H=256 N=4 level, I=256 H=256 N=2 0.151/0.164, I=64 H=256 N=4
  // 0.162/0.181), and brgemm stays.
  const bool wide_input = 2 * bucket.I >= H;
  const bool long_pass = bucket.t_class >= 2;
  const bool few_rows = H >= 256 && rows <= 4 && (long_pass || (best.threads == 1 && wide_input));
  const bool mid_cell = best.threads == 1 && H >= 192 && H <= 384 && wide_input &&
                        (rows <= 8 || (rows <= 16 && H <= 256 && bucket.I >= H));
  if (!bf16_ && geom_.gates() == 4 && (few_rows || mid_cell) && bucket.t_class >= 1) any = false;
  // Two directions side by side, each on its own thread with many rows: gemm. bilstm (N=16,
  // H=256) ran 7.4 ms on ldigo against 9.3 on brgemm at 2 threads, and level at one; a
  // batch split of lstm_med (16 rows, H=512) was the other way round (34.7 against 41.3).
  // Not in bf16, where brgemm takes AMX: there ldigo ran bilstm 1.9x slower. An LSTM of 256
  // units or more takes gemm at every number of rows: two directions of H=256 over T=255 at
  // 2 threads (p50 ms, brgemm/gemm), input 512: N=6 32.1/17.3, N=8 35.5/24.6, N=12 41.2/35.1;
  // input 256: N=6 17.0/12.1, N=8 19.0/16.3, N=12 level (Open-Unmix's BiLSTMs at batch 8).
  const bool wide_lstm = geom_.gates() == 4 && H >= 256;
  if (!bf16_ && D() == 2 && best.split > 1 && (rows >= 16 || wide_lstm) && bucket.N == rows)
    any = false;
  return any;
}

Result<Choice> RnnKernel::timed_choice(const std::vector<Choice>& cands, const Choice& untimed,
                                       const BucketKey& bucket, int64_t T,
                                       std::string* detail) const {
  // A probe of the bucket's shape, T capped so that a pass stays short.
  const double step_flops = 2.0 * static_cast<double>(bucket.N) *
                            static_cast<double>(geom_.gates() * bucket.H) *
                            static_cast<double>(bucket.I + bucket.H) * static_cast<double>(D());
  int64_t tp = T;
  const double budget = 2e9;
  if (step_flops * static_cast<double>(tp) > budget) {
    tp = std::min(T, std::max<int64_t>(8, static_cast<int64_t>(budget / step_flops)));
  }
  std::vector<bool> ok = tp > 2 ? screen_omp(cands, bucket) : std::vector<bool>(cands.size(), true);
  RECUR_ASSIGN_OR_RETURN(RaceTimes times, race(cands, bucket, tp, std::move(ok)));
  *detail = describe_times(cands, times);
  if (tp < T) RECUR_RETURN_IF_ERROR(retime_long(cands, bucket, T, times, *detail));
  const size_t win = pick_winner(cands, times);
  if (win == cands.size()) {
    return internal_error(node_.describe() + ": no oneDNN RNN implementation ran");
  }
  return cands[prefer_rule(cands, untimed, times, win)];
}

// OpenMP candidates first pass a two-step check against one thread: on a busy machine their
// first full pass alone could take seconds (a stall at every barrier of every step). Returns
// the candidates left in the race.
std::vector<bool> RnnKernel::screen_omp(const std::vector<Choice>& cands,
                                        const BucketKey& bucket) const {
  std::vector<bool> ok(cands.size(), true);
  std::vector<bool> check(cands.size(), false);
  size_t single = cands.size();
  for (size_t i = 0; i < cands.size(); ++i) {
    if (is_omp(cands[i])) check[i] = true;
    if (is_single(cands[i]) && single == cands.size()) single = i;
  }
  if (single == cands.size() || std::count(check.begin(), check.end(), true) == 0) return ok;
  check[single] = true;
  ProbeWeights w;
  std::vector<double> t(cands.size(), 1e300);
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!check[i]) continue;
    auto set = prepare_probe(cands[i], 2, bucket.N, bucket.I, bucket.H, w);
    if (!set.ok()) continue;
    std::vector<double> v;
    for (int k = 0; k < 4; ++k) {
      auto ms = time_probe(**set);
      if (ms.ok()) v.push_back(*ms);
    }
    if (!v.empty()) t[i] = median_of(v);
  }
  for (size_t i = 0; i < cands.size(); ++i) {
    if (is_omp(cands[i]) && t[i] > 1.5 * t[single]) ok[i] = false;
  }
  return ok;
}

// Times the candidates still `ok` at tp steps (candidate_race.h).
Result<RaceTimes> RnnKernel::race(const std::vector<Choice>& cands, const BucketKey& bucket,
                                  int64_t tp, std::vector<bool> ok) const {
  ProbeWeights probe_weights;
  std::vector<std::unique_ptr<ProbeSet>> sets(cands.size());
  std::vector<RaceCandidate> entrants(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    entrants[i].single = cands[i].threads == 1 && cands[i].split == 1;
    entrants[i].ok = ok[i];
  }
  RaceCallbacks cb;
  // The warm-up pass also pays one-time costs (oneDNN generates its gemm kernels on first
  // use, OpenMP starts its threads) and weeds out failures.
  cb.warm_up = [&](size_t i) -> Result<double> {
    RECUR_ASSIGN_OR_RETURN(
        sets[i], prepare_probe(cands[i], tp, bucket.N, bucket.I, bucket.H, probe_weights));
    return time_probe(*sets[i]);
  };
  cb.pass = [&](size_t i) { return time_probe(*sets[i]); };
  cb.now_ms = [] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  RECUR_ASSIGN_OR_RETURN(RaceResult r, race_candidates(std::move(entrants), cb));
  RaceTimes times;
  times.ok = std::move(r.ok);
  times.med = std::move(r.med);
  times.reps = r.reps;
  times.steps = tp;
  return times;
}

// A short probe misses what only a long sequence shows: a split's jobs each stream every
// weight matrix and its own gate buffers through the shared caches, which the OpenMP threads
// of one primitive share (lstm_large: equal at T=8, OpenMP 25% faster at T=100). The best of
// each kind of threading, if close, is timed again at a longer T.
Status RnnKernel::retime_long(const std::vector<Choice>& cands, const BucketKey& bucket, int64_t T,
                              RaceTimes& times, std::string& detail) const {
  const double best_med = *std::min_element(times.med.begin(), times.med.end());
  std::vector<bool> finalists(cands.size(), false);
  int count = 0;
  for (auto kind : {is_single, is_split, is_omp}) {
    const size_t b = best_where(cands, times, kind);
    if (b != cands.size() && times.med[b] <= 1.3 * best_med) {
      finalists[b] = true;
      ++count;
    }
  }
  // Only OpenMP against a split or one thread differs with T that way.
  const size_t omp_best = best_where(cands, times, is_omp);
  if (count < 2 || omp_best == cands.size() || !finalists[omp_best]) return ok_status();
  const int64_t tp2 = std::min(T, 4 * times.steps);
  RECUR_ASSIGN_OR_RETURN(RaceTimes again, race(cands, bucket, tp2, std::move(finalists)));
  if (std::count(again.ok.begin(), again.ok.end(), true) > 0) {
    detail += "; then " + describe_times(cands, again);
    times = std::move(again);
  }
  return ok_status();
}

void RnnKernel::report_choice(const BucketKey& bucket, int64_t T, const Choice& best,
                              const std::string& detail, std::string* note) const {
  if (!note && !opts_.verbose) return;
  std::string text = std::string(spec_.cell_name()) + " N=" + std::to_string(bucket.N) + " T~" +
                     std::to_string(T) + (bucket.segments ? " (segments)" : "") + ": " +
                     best.describe(D()) + " (" + detail + ")";
  if (note) *note = text;
  if (opts_.verbose) {
    std::fprintf(stderr, "recur onednn: %s: %s\n", node_.name.c_str(), text.c_str());
  }
}

}  // namespace recur::onednn::rnn
