// Smaller OpenMP teams while other processes, or this one's concurrent runs, hold cores
// (providers/onednn/common/busy_cores.h): the /proc/stat parser, the decision with its
// hysteresis, the leases of concurrent runs, and sessions that run their large primitives and
// RNN passes on a smaller team when cores count as taken (a test hook stands in for the other
// processes, a lease for another run), give the results of the whole team, and do not shrink
// when deterministic or with onednn.busy_cores=wait.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "providers/onednn/common/busy_cores.h"
#include "recur/recur.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"

namespace recur {
namespace {

using onednn::CpuTicks;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

constexpr char kStat[] =
    "cpu  900 10 200 5000 30 0 7 0 0 0\n"
    "cpu0 100 1 20 1000 3 0 1 5 0 0\n"
    "cpu1 200 2 40 2000 4 6 2 0 0 0\n"
    "cpu2 300 3 60 3000 5 0 3 1 0 0\n"
    "intr 123456 1 2 3 4 5\n"
    "ctxt 99\n";

bool parse(std::string_view text, const std::vector<int>& cpus, CpuTicks& t) {
  return onednn::parse_proc_stat(std::span<const char>(text.data(), text.size()), cpus, t);
}

TEST(BusyCores, ParsesTheCpusOfTheAffinityOnly) {
  CpuTicks t;
  ASSERT_TRUE(parse(kStat, {0, 2}, t));
  // busy: user nice system irq softirq steal; idle and iowait are free.
  const uint64_t busy0 = 100 + 1 + 20 + 0 + 1 + 5, busy2 = 300 + 3 + 60 + 0 + 3 + 1;
  EXPECT_EQ(t.busy, busy0 + busy2);
  EXPECT_EQ(t.total, busy0 + 1000 + 3 + busy2 + 3000 + 5);
  EXPECT_EQ(t.nice, 1u + 3);
  ASSERT_TRUE(parse(kStat, {1}, t));
  EXPECT_EQ(t.busy, 200u + 2 + 40 + 6 + 2 + 0);
  EXPECT_EQ(t.nice, 2u);
}

// Work at lowered priority yields to a process at the default one, so it does not count as
// contending then; to a process at lowered priority itself it does.
TEST(BusyCores, WorkAtLoweredPriorityContendsOnlyWithLoweredWork) {
  CpuTicks t;
  ASSERT_TRUE(parse(kStat, {0, 2}, t));
  EXPECT_EQ(onednn::contending_ticks(t, 0), t.busy - 4);
  EXPECT_EQ(onednn::contending_ticks(t, -5), t.busy - 4);
  EXPECT_EQ(onednn::contending_ticks(t, 10), t.busy);
  // Counters that do not add up (a malformed line, a wrapped counter) never go below zero.
  const CpuTicks odd{.busy = 3, .total = 10, .nice = 7};
  EXPECT_EQ(onednn::contending_ticks(odd, 0), 0u);
}

TEST(BusyCores, RefusesAMissingOrMalformedCpu) {
  CpuTicks t;
  EXPECT_FALSE(parse(kStat, {0, 3}, t)) << "cpu3 is not in the text";
  EXPECT_FALSE(parse("cpu0 1 2 x\n", {0}, t)) << "fewer than four counters";
  EXPECT_FALSE(parse("cpu0", {0}, t));
  EXPECT_FALSE(parse("", {0}, t));
  // A kernel that stops after idle still counts.
  ASSERT_TRUE(parse("cpu0 5 0 5 90\n", {0}, t));
  EXPECT_EQ(t.busy, 10u);
  EXPECT_EQ(t.total, 100u);
}

TEST(BusyCores, CountsACoreFromFourTenthsAndReleasesItBelowAQuarter) {
  using onednn::taken_after_window;
  EXPECT_EQ(taken_after_window(0.0, 0), 0);
  EXPECT_EQ(taken_after_window(0.35, 0), 0);
  EXPECT_EQ(taken_after_window(0.45, 0), 1) << "two threads sharing a core get half each";
  EXPECT_EQ(taken_after_window(1.0, 0), 1);
  EXPECT_EQ(taken_after_window(1.45, 0), 2);
  EXPECT_EQ(taken_after_window(0.3, 1), 1) << "a count on the edge must not flip";
  EXPECT_EQ(taken_after_window(0.2, 1), 0);
  EXPECT_EQ(taken_after_window(1.3, 2), 2);
  EXPECT_EQ(taken_after_window(1.2, 2), 1);
  EXPECT_EQ(taken_after_window(std::numeric_limits<double>::quiet_NaN(), 1), 1);
}

// Cores count as taken for the test's lifetime: more than any machine has, so that every team
// shrinks to one thread.
struct AllCoresTaken {
  AllCoresTaken() { onednn::override_cores_taken(1 << 16); }
  ~AllCoresTaken() { onednn::override_cores_taken(-1); }
};

int team(int threads) { return onednn::CoreLease(threads, true).threads(); }

TEST(BusyCores, TeamsHalveToWhatFits) {
  AllCoresTaken busy;
  EXPECT_EQ(team(1), 1);
  EXPECT_EQ(team(2), 1);
  EXPECT_EQ(team(16), 1);
  onednn::override_cores_taken(0);
  EXPECT_EQ(team(1), 1);
}

TEST(BusyCores, LeasesShareTheCoresBetweenConcurrentRuns) {
  onednn::override_cores_taken(0);
  const int before = onednn::leased_threads();
  {
    // Another run of this process holds more threads than any machine has cores.
    onednn::CoreLease other(1 << 16, false);
    EXPECT_EQ(other.threads(), 1 << 16) << "a lease without shrink keeps its team";
    onednn::CoreLease mine(4, true);
    EXPECT_EQ(mine.threads(), 1);
    onednn::CoreLease fixed(4, false);
    EXPECT_EQ(fixed.threads(), 4);
    EXPECT_EQ(onednn::leased_threads(), before + (1 << 16) + 1 + 4);
  }
  EXPECT_EQ(onednn::leased_threads(), before) << "leases give their threads back";
  onednn::override_cores_taken(-1);
}

// A MatMul of 8M multiply-adds (a team at 2 threads) and an LSTM whose passes run on an OpenMP
// team (onednn.threading=omp, oneDNN's primitive rather than recur's small-cell loops).
std::string matmul_lstm_model() {
  const int64_t I = 64, H = 128;
  std::mt19937 rng(3);
  ModelBuilder mb(14);
  mb.input("A", DType::kFloat32, {64, 512});
  mb.input("X", DType::kFloat32, {8, 16, I});
  mb.initializer("B", random_tensor({512, 256}, rng));
  mb.initializer("W", random_tensor({1, 4 * H, I}, rng, 0.1f));
  mb.initializer("R", random_tensor({1, 4 * H, H}, rng, 0.1f));
  mb.output("Y_mm", DType::kFloat32).output("Y", DType::kFloat32);
  mb.node("MatMul", {"A", "B"}, {"Y_mm"}, "mm");
  auto& n = mb.node("LSTM", {"X", "W", "R"}, {"Y"}, "lstm");
  set_attr(n, "hidden_size", H);
  return mb.bytes();
}

Feeds feeds() {
  std::mt19937 rng(5);
  Feeds f;
  f.emplace_back("A", random_tensor({64, 512}, rng));
  f.emplace_back("X", random_tensor({8, 16, 64}, rng));
  return f;
}

SessionOptions options(const std::string& busy_cores, bool deterministic) {
  SessionOptions o;
  o.providers({"onednn"})
      .threads(2)
      .deterministic(deterministic)
      .set("onednn.threading", "omp")
      .set("onednn.impl", "primitive")
      .set("onednn.busy_cores", busy_cores);
  return o;
}

void expect_close(const Outputs& got, const Outputs& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape());
    const float* g = got[i].data<float>();
    const float* w = want[i].data<float>();
    double worst = 0;
    for (int64_t k = 0; k < got[i].numel(); ++k)
      worst = std::max(worst, std::abs(double{g[k]} - double{w[k]}) / (1.0 + std::abs(w[k])));
    EXPECT_LE(worst, 1e-5) << "output " << i;
  }
}

// The outputs of a session that keeps its teams whole.
Outputs whole_teams(const std::string& model, const Feeds& f) {
  Session whole = Session::from_bytes(model.data(), model.size(), options("wait", false));
  return whole.run(f);
}

TEST(BusyCores, SessionsRunSmallerTeamsWhileCoresAreTakenWithTheSameResults) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string model = matmul_lstm_model();
  const Feeds f = feeds();
  const Outputs want = whole_teams(model, f);

  Session s = Session::from_bytes(model.data(), model.size(), options("shrink", false));
  AllCoresTaken busy;
  const uint64_t before = onednn::smaller_team_runs();
  const Outputs got = s.run(f);
  // One for the MatMul, one for the LSTM's pass.
  EXPECT_GE(onednn::smaller_team_runs(), before + 2) << "nothing ran on a smaller team";
  expect_close(got, want);
  // Once made, the smaller teams run again, and the whole team after the cores come back.
  expect_close(s.run(f), want);
  onednn::override_cores_taken(0);
  const uint64_t quiet = onednn::smaller_team_runs();
  expect_close(s.run(f), want);
  EXPECT_EQ(onednn::smaller_team_runs(), quiet);
}

TEST(BusyCores, ARunBesideAnotherOfThisProcessTakesTheCoresLeft) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string model = matmul_lstm_model();
  const Feeds f = feeds();
  const Outputs want = whole_teams(model, f);
  Session s = Session::from_bytes(model.data(), model.size(), options("shrink", false));
  onednn::override_cores_taken(0);
  onednn::CoreLease other(1 << 16, false);
  const uint64_t before = onednn::smaller_team_runs();
  const Outputs got = s.run(f);
  EXPECT_GE(onednn::smaller_team_runs(), before + 2) << "the run took teams as if alone";
  expect_close(got, want);
  onednn::override_cores_taken(-1);
}

TEST(BusyCores, DeterministicSessionsAndWaitKeepTheirTeams) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string model = matmul_lstm_model();
  const Feeds f = feeds();
  AllCoresTaken busy;
  for (const auto& [mode, det] : {std::pair{"wait", false}, std::pair{"shrink", true}}) {
    Session s = Session::from_bytes(model.data(), model.size(), options(mode, det));
    const uint64_t before = onednn::smaller_team_runs();
    s.run(f);
    EXPECT_EQ(onednn::smaller_team_runs(), before) << mode << " deterministic=" << det;
  }
}

// A deterministic session keeps its bits while threads of its own process spin on every core:
// busy_cores.h does not count them, but a team's long pass stalls at its barriers, which the
// stall guard (stall_guard.h) sees; it must not then give the pass one thread, whose sums may
// split otherwise (under ctest -j2 with oneDNN capped to AVX2, an LSTM of 256 units gave other
// last bits on every run after the first).
TEST(BusyCores, DeterministicLongPassesKeepTheirTeamThroughStalls) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const int64_t I = 32, H = 256, T = 300;  // T above rnn_chooser.h's kLongPassSteps
  std::mt19937 rng(7);
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {T, 1, I});
  mb.initializer("W", random_tensor({1, 4 * H, I}, rng, 0.1f));
  mb.initializer("R", random_tensor({1, 4 * H, H}, rng, 0.1f));
  mb.output("Y_h", DType::kFloat32);
  set_attr(mb.node("LSTM", {"X", "W", "R"}, {"", "Y_h"}, "lstm"), "hidden_size", H);
  const std::string model = mb.bytes();
  const Feeds f = {{"X", random_tensor({T, 1, I}, rng)}};
  Session s = Session::from_bytes(model.data(), model.size(), options("shrink", true));
  const Outputs first = s.run(f);
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i) {
    spinners.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const uint64_t before = onednn::smaller_team_runs();
  int differ = 0;
  for (int r = 0; r < 4; ++r) {
    const Outputs o = s.run(f);
    differ += std::memcmp(o[0].raw_data(), first[0].raw_data(), o[0].nbytes()) != 0;
  }
  const uint64_t smaller = onednn::smaller_team_runs() - before;
  stop = true;
  for (std::thread& t : spinners) t.join();
  EXPECT_EQ(differ, 0) << "runs of a deterministic session gave other bits";
  EXPECT_EQ(smaller, 0u) << "a deterministic session's pass left its team";
}

TEST(BusyCores, TheSettingIsCheckedAtLoad) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string model = matmul_lstm_model();
  SessionOptions o = options("sometimes", false);
  try {
    Session::from_bytes(model.data(), model.size(), o);
    ADD_FAILURE() << "an unknown onednn.busy_cores value loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("busy_cores"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace recur
