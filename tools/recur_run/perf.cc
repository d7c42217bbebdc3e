#include "tools/recur_run/perf.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <latch>
#include <map>
#include <thread>
#include <vector>

#include "tools/recur_run/by_op.h"
#include "tools/recur_run/json_text.h"

namespace recur::tools {

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  std::vector<double> ms;  // every timed run, thread by thread
  double wall_s = 0;       // the timed phase, first start to last finish
};

// VmHWM and VmRSS in KiB at the end of load; -1 where /proc gives none.
long g_load_hwm_kib = -1, g_load_rss_kib = -1;

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// --timeout gives each run its own deadline; without it the options are used as they are.
void run_once(const Session& s, const Feeds& f, const RunOptions& ro, const Args& a) {
  if (a.timeout_ms > 0) {
    s.run(f, run_options(a));
  } else {
    s.run(f, ro);
  }
}

// One thread's share: warm-up, then wait for every thread so the timed phases overlap, then
// runs until the count or the deadline.
void timed_runs(const Session& s, const Feeds& f, const RunOptions& ro, const Args& a,
                std::latch& ready, Clock::time_point* start, std::vector<double>* ms) {
  try {
    for (int i = 0; i < a.warmup; ++i) run_once(s, f, ro, a);
  } catch (...) {
    ready.count_down();  // a thread that failed in warm-up must not hold the others
    throw;
  }
  ready.arrive_and_wait();
  *start = Clock::now();
  const auto deadline = *start + std::chrono::duration<double>(a.duration_s);
  for (int i = 0;; ++i) {
    if (a.duration_s > 0 ? i > 0 && Clock::now() >= deadline : i >= a.repeat) break;
    const auto t0 = Clock::now();
    run_once(s, f, ro, a);
    ms->push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
}

Timing time_runs(const Session& s, const Feeds& f, const RunOptions& ro, const Args& a) {
  const auto n = static_cast<size_t>(a.concurrency);
  std::vector<std::vector<double>> ms(n);
  std::vector<Clock::time_point> starts(n);
  std::vector<std::exception_ptr> errors(n);
  std::latch ready(static_cast<std::ptrdiff_t>(n));
  auto worker = [&](size_t t) {
    try {
      timed_runs(s, f, ro, a, ready, &starts[t], &ms[t]);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  if (n == 1) {
    // The thread that loaded the session, as before --concurrency: a CPU provider's thread
    // pool belongs to the thread that calls it, and single-thread figures should not move.
    worker(0);
  } else {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < n; ++t) {
      try {
        threads.emplace_back(worker, t);
      } catch (...) {
        // The threads already started must not wait for ones that never will.
        ready.count_down(static_cast<std::ptrdiff_t>(n - t));
        throw;
      }
    }
  }
  const auto end = Clock::now();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  Timing t;
  for (auto& v : ms) t.ms.insert(t.ms.end(), v.begin(), v.end());
  t.wall_s =
      std::chrono::duration<double>(end - *std::min_element(starts.begin(), starts.end())).count();
  return t;
}

struct Stats {
  double min, p50, p90, p99, mean, throughput;
};

Stats stats(const Timing& t) {
  const auto& ms = t.ms;
  double sum = 0;
  for (double v : ms) sum += v;
  const auto runs = static_cast<double>(ms.size());
  return {*std::min_element(ms.begin(), ms.end()),
          percentile(ms, 0.5),
          percentile(ms, 0.9),
          percentile(ms, 0.99),
          sum / runs,
          t.wall_s > 0 ? runs / t.wall_s : 0.0};
}

constexpr size_t kTopNodes = 20;

// The warm-up runs of every thread start before any timed run (the threads wait for each
// other in between), so they are the profile's first warmup x concurrency runs.
TimeBreakdown timed_breakdown(const Session& s, const Args& a) {
  return time_breakdown(s.profile(), static_cast<int64_t>(a.warmup) * a.concurrency);
}

// The keys before "concurrency" are the schema recur-bench and tools/bench read; new ones go
// after them.
void print_json(const Session& s, const Timing& t, const Stats& st, double load_ms, const Args& a,
                const std::string& model) {
  std::map<std::string, int> counts;
  for (const auto& n : s.assignment()) counts[n.provider]++;
  Json assigned = Json::object();
  for (const auto& [p, c] : counts) assigned[p] = c;
  Json j;
  j["model"] = model;
  j["providers"] = s.providers();
  j["assigned"] = assigned;
  j["threads"] = a.session.threads();
  j["load_ms"] = load_ms;
  j["warmup"] = a.warmup;
  j["runs"] = t.ms.size();
  j["latency_ms"] = {
      {"min", st.min}, {"p50", st.p50}, {"p90", st.p90}, {"p99", st.p99}, {"mean", st.mean}};
  j["samples_ms"] = t.ms;
  j["concurrency"] = a.concurrency;
  j["duration_s"] = a.duration_s > 0 ? Json(a.duration_s) : Json(nullptr);
  j["wall_s"] = t.wall_s;
  j["throughput_per_s"] = st.throughput;
  if (a.by_op) j["by_op"] = by_op_json(timed_breakdown(s, a), kTopNodes);
  j["load_peak_rss_kib"] = g_load_hwm_kib;
  j["load_rss_kib"] = g_load_rss_kib;
  std::cout << json_text(j) << "\n";
}

void print_text(const Timing& t, const Stats& st, double load_ms, const Args& a) {
  std::printf("load: %.3f ms\n", load_ms);
  std::printf(
      "run latency over %zu runs after %d warm-up: min %.4f ms  p50 %.4f  p90 %.4f  "
      "p99 %.4f  mean %.4f\n",
      t.ms.size(), a.warmup, st.min, st.p50, st.p90, st.p99, st.mean);
  std::printf("throughput: %.2f runs/s (%d thread%s, %.3f s)\n", st.throughput, a.concurrency,
              a.concurrency == 1 ? "" : "s", t.wall_s);
}

}  // namespace

void note_load_memory() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) g_load_hwm_kib = std::stol(line.substr(6));
    if (line.rfind("VmRSS:", 0) == 0) g_load_rss_kib = std::stol(line.substr(6));
  }
}

int run_perf(const Session& s, const Feeds& feeds, double load_ms, const Args& a,
             const std::string& model) {
  // --device-io: what a caller that keeps its tensors on the GPU sees (no host copies).
  Feeds dev_feeds;
  RunOptions ro = a.run;
  if (a.device_io) {
    for (const auto& [name, t] : feeds) dev_feeds.emplace_back(name, t.to(Device::cuda(0)));
    ro.outputs_on_device = true;
  }
  const Timing t = time_runs(s, a.device_io ? dev_feeds : feeds, ro, a);
  const Stats st = stats(t);
  if (a.json) {
    print_json(s, t, st, load_ms, a, model);
  } else {
    print_text(t, st, load_ms, a);
    if (a.by_op) std::cout << by_op_text(timed_breakdown(s, a), kTopNodes);
  }
  return kExitOk;
}

}  // namespace recur::tools
