// Run-time limits: the host memory one run may hold (SessionOptions::memory_limit), Loop and
// Scan growth under it, and cancellation (RunOptions::terminate, deadline) from another thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "recur/recur.h"
#include "runtime/core/memory_budget.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using Clock = std::chrono::steady_clock;
using testing::expect_error;
using testing::floats;
using testing::ModelBuilder;
using testing::set_attr;

constexpr uint64_t kMiB = uint64_t{1} << 20;

Tensor int64s(const Shape& shape, const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>(shape, v);
}

Session session_of(const ModelBuilder& m, const SessionOptions& o) {
  const std::string bytes = m.bytes();
  return Session::from_bytes(bytes.data(), bytes.size(), o);
}

// y = Expand(x, shape): a float32 tensor of `shape`, from a one-element x.
ModelBuilder expand_model(int64_t rows, int64_t cols) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {1});
  m.initializer("shape", int64s({2}, {rows, cols}));
  m.output("y", DType::kFloat32);
  m.node("Expand", {"x", "shape"}, {"y"}, "bomb");
  return m;
}

TEST(MemoryLimit, BigIntermediateFailsNamingTheNode) {
  // 4096 x 4096 float32 is 64 MiB, four times the limit.
  Session s = session_of(expand_model(4096, 4096), SessionOptions().memory_limit(16 * kMiB));
  expect_error(
      [&] {
        s.run({{"x", floats({1}, {2})}});
      },
      ErrorCode::kOutOfRange,
      {"node 'bomb' (Expand)", "16777216 bytes", "SessionOptions::memory_limit", "[4096,4096]"});
}

TEST(MemoryLimit, ModelWithinTheLimitRuns) {
  // 1024 x 1024 float32 is 4 MiB, a quarter of the limit.
  Session s = session_of(expand_model(1024, 1024), SessionOptions().memory_limit(16 * kMiB));
  for (int i = 0; i < 3; ++i) {  // and again: a finished run's memory no longer counts
    Outputs o = s.run({{"x", floats({1}, {2})}});
    ASSERT_EQ(o[0].numel(), 1024 * 1024);
    EXPECT_EQ(o[0].data<float>()[1024 * 1024 - 1], 2.0f);
  }
}

TEST(MemoryLimit, DefaultIsTheAvailableMemory) {
  const size_t avail = available_host_memory();
  EXPECT_GT(avail, size_t{16} * kMiB);
  // A 512 MiB intermediate passes the default limit only where that much is available.
  if (avail < 4 * 512 * kMiB) GTEST_SKIP() << "less than 2 GiB available";
  Session s = session_of(expand_model(512, 256 * 1024), SessionOptions());
  EXPECT_EQ(s.run({{"x", floats({1}, {1})}})[0].numel(), 512 * 256 * 1024);
}

TEST(MemoryLimit, EachRunHasItsOwnBudget) {
  // A 10 MiB output of one run, still held, does not count against the next run's 16 MiB.
  Session s = session_of(expand_model(1280, 2048), SessionOptions().memory_limit(16 * kMiB));
  Outputs first = s.run({{"x", floats({1}, {1})}});
  Outputs second = s.run({{"x", floats({1}, {2})}});
  EXPECT_EQ(first[0].data<float>()[7], 1.0f);
  EXPECT_EQ(second[0].data<float>()[7], 2.0f);

  // And runs on several threads at once, each holding 10 MiB, all succeed.
  std::vector<std::future<float>> runs;
  for (int t = 0; t < 4; ++t) {
    runs.push_back(std::async(std::launch::async, [&s, t] {
      float v = 0;
      for (int i = 0; i < 5; ++i) v = s.run({{"x", floats({1}, {float(t)})}})[0].data<float>()[99];
      return v;
    }));
  }
  for (int t = 0; t < 4; ++t) EXPECT_EQ(runs[static_cast<size_t>(t)].get(), float(t));
}

TEST(MemoryLimit, BudgetsOfConcurrentThreadsAreSeparate) {
  // Two threads each hold 10 MiB against their own 16 MiB budget at the same time.
  auto a = std::make_shared<MemoryBudget>(16 * kMiB);
  auto b = std::make_shared<MemoryBudget>(16 * kMiB);
  std::atomic<int> holding{0};
  auto hold = [&](MemoryBudget* budget) {
    MemoryBudgetScope scope(budget);
    Tensor t = Tensor::empty(DType::kFloat32, {10 * 1024 * 256});
    ++holding;
    while (holding.load() < 2) std::this_thread::yield();
    return budget->used();
  };
  auto fa = std::async(std::launch::async, hold, a.get());
  auto fb = std::async(std::launch::async, hold, b.get());
  EXPECT_EQ(fa.get(), 10 * kMiB);
  EXPECT_EQ(fb.get(), 10 * kMiB);
  EXPECT_EQ(a->used(), 0u);  // freed with the tensors
  EXPECT_EQ(b->used(), 0u);
  EXPECT_EQ(a->peak(), 10 * kMiB);
}

// A body graph input of the given ONNX element type.
void body_input(onnx::GraphProto& body, const char* name, int elem_type) {
  auto* i = body.add_input();
  i->set_name(name);
  i->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

// A body output declared float32.
void body_float_output(onnx::GraphProto& body, const char* name) {
  auto* o = body.add_output();
  o->set_name(name);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(1);
}

// Defect 8: a Loop with no trip count and no cond whose body emits a 1 MiB scan output per
// iteration. The iteration cap does not bound its memory; the memory limit must.
ModelBuilder growing_loop() {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {1});
  m.initializer("elems", int64s({1}, {256 * 1024}));  // 1 MiB of float32
  m.output("stacked", DType::kFloat32);
  onnx::GraphProto body;
  body.set_name("body");
  body_input(body, "iter", 7);
  body_input(body, "cond_in", 9);
  auto* expand = body.add_node();
  expand->set_op_type("Expand");
  expand->set_name("fill");
  expand->add_input("x");      // captured
  expand->add_input("elems");  // captured
  expand->add_output("part");
  auto* keep = body.add_node();
  keep->set_op_type("Identity");
  keep->add_input("cond_in");
  keep->add_output("cond_out");
  body.add_output()->set_name("cond_out");
  body_float_output(body, "part");
  auto& loop = m.node("Loop", {"", ""}, {"stacked"}, "grow");
  set_attr(loop, "body", body);
  return m;
}

TEST(MemoryLimit, LoopWithoutTripCountStopsAtTheLimit) {
  Session s = session_of(growing_loop(),
                         SessionOptions().max_loop_iterations(1000).memory_limit(64 * kMiB));
  std::string message;
  try {
    s.run({{"x", floats({1}, {1})}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfRange) << e.what();
    message = e.what();
  }
  EXPECT_NE(message.find("node 'grow' (Loop)"), std::string::npos) << message;
  EXPECT_NE(message.find("memory limit of 67108864 bytes"), std::string::npos) << message;
  EXPECT_EQ(message.find("iterations without stopping"), std::string::npos) << message;
  // Stopped within the first 64 iterations (64 MiB of 1 MiB parts), not at the cap of 1000.
  const size_t at = message.find("iteration ");
  ASSERT_NE(at, std::string::npos) << message;
  EXPECT_LT(std::stol(message.substr(at + 10)), 64) << message;
}

TEST(MemoryLimit, LoopGrowthCountsBeforeTheStack) {
  // The body returns the same captured 1 MiB tensor each iteration, so no allocation grows;
  // the stacked output would. The loop must stop while it grows, not after 1000 iterations when
  // it stacks them.
  ModelBuilder m = growing_loop();
  m.initializer("big", floats({256 * 1024}, std::vector<float>(256 * 1024, 1.0f)));
  onnx::GraphProto* body = m.graph().mutable_node(0)->mutable_attribute(0)->mutable_g();
  body->mutable_node(0)->set_op_type("Identity");
  body->mutable_node(0)->clear_input();
  body->mutable_node(0)->add_input("big");
  Session s = session_of(m, SessionOptions().max_loop_iterations(1000).memory_limit(64 * kMiB));
  expect_error(
      [&] {
        s.run({{"x", floats({1}, {1})}});
      },
      ErrorCode::kOutOfRange,
      {"node 'grow' (Loop): iteration", "memory limit of 67108864 bytes",
       "scan outputs stacked so far"});
}

TEST(MemoryLimit, LoopWithinTheLimitRuns) {
  // The same loop with a trip count of 8: 8 MiB stacked, under the 64 MiB limit.
  ModelBuilder m = growing_loop();
  m.initializer("m", int64s({}, {8}));
  m.graph().mutable_node(0)->set_input(0, "m");
  Session s = session_of(m, SessionOptions().memory_limit(64 * kMiB));
  Outputs o = s.run({{"x", floats({1}, {3})}});
  EXPECT_EQ(o[0].shape(), (Shape{8, 256 * 1024}));
  EXPECT_EQ(o[0].data<float>()[8 * 256 * 1024 - 1], 3.0f);
}

// A Scan over the 1000 rows of xs whose body emits a 1 MiB scan output per row.
ModelBuilder growing_scan() {
  ModelBuilder m;
  m.input("xs", DType::kFloat32, {1000, 1});
  m.initializer("elems", int64s({1}, {256 * 1024}));
  m.output("stacked", DType::kFloat32);
  onnx::GraphProto body;
  body.set_name("body");
  body_input(body, "row", 1);
  auto* expand = body.add_node();
  expand->set_op_type("Expand");
  expand->set_name("fill");
  expand->add_input("row");
  expand->add_input("elems");  // captured
  expand->add_output("part");
  body_float_output(body, "part");
  auto& scan = m.node("Scan", {"xs"}, {"stacked"}, "sweep");
  set_attr(scan, "body", body);
  set_attr(scan, "num_scan_inputs", int64_t{1});
  return m;
}

TEST(MemoryLimit, ScanGrowthStopsAtTheLimit) {
  Session s = session_of(growing_scan(), SessionOptions().memory_limit(64 * kMiB));
  std::vector<float> rows(1000, 1.0f);
  expect_error(
      [&] {
        s.run({{"xs", floats({1000, 1}, rows)}});
      },
      ErrorCode::kOutOfRange,
      {"node 'sweep' (Scan)", "iteration", "memory limit of 67108864 bytes"});
}

// Long sequences: an LSTM over any number of steps, batch 1, with random weights.
ModelBuilder lstm_model(int64_t I, int64_t H) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.2f, 0.2f);
  auto random = [&](const Shape& shape) {
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    for (float& x : v) x = u(rng);
    return floats(shape, v);
  };
  ModelBuilder m;
  m.input("X", DType::kFloat32, {-1, 1, I}, {"T"});
  m.initializer("W", random({1, 4 * H, I}));
  m.initializer("R", random({1, 4 * H, H}));
  m.output("Y_h", DType::kFloat32);
  auto& n = m.node("LSTM", {"X", "W", "R"}, {"", "Y_h"}, "long_lstm");
  set_attr(n, "hidden_size", H);
  return m;
}

Tensor ramp(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 17) * 0.05f - 0.4f;
  return floats(shape, v);
}

bool have_provider(const std::string& name) {
  for (const auto& p : list_providers())
    if (p.name == name) return p.available;
  return false;
}

struct Ended {
  ErrorCode code = ErrorCode::kOk;
  std::string message;
  Clock::time_point at;
};

// Runs `s` on another thread with `ro`, terminates it after `after` and returns how it ended
// and how long after terminate() it did.
Ended run_and_terminate(const Session& s, const Feeds& feeds, const RunOptions& ro,
                        std::chrono::milliseconds after, double* latency_ms) {
  auto run = std::async(std::launch::async, [&] {
    Ended e;
    try {
      s.run(feeds, ro);
    } catch (const Error& err) {
      e.code = err.code();
      e.message = err.what();
    }
    e.at = Clock::now();
    return e;
  });
  std::this_thread::sleep_for(after);
  const auto t0 = Clock::now();
  ro.terminate();
  Ended e = run.get();
  *latency_ms = std::chrono::duration<double, std::milli>(e.at - t0).count();
  return e;
}

// The number of time steps that makes a run of `s` take about `ms` on this machine now.
int64_t steps_for(const Session& s, int64_t I, double ms) {
  const int64_t T0 = 1000;
  s.run({{"X", ramp({T0, 1, I})}});  // warm
  const auto t0 = Clock::now();
  s.run({{"X", ramp({T0, 1, I})}});
  const double t0_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return std::clamp<int64_t>(static_cast<int64_t>(T0 * ms / std::max(t0_ms, 1e-3)), T0, 2'000'000);
}

void expect_cancellable_lstm(const std::string& provider, int64_t H) {
  const int64_t I = 32;
  // Deterministic: the bits compared below are then those of one team size. Otherwise a long
  // pass may leave its team while another process holds a core (busy_cores.h, stall_guard.h),
  // and a sum split otherwise: under ctest -j2, the AVX2 LSTM's output differed in a last bit.
  Session s =
      session_of(lstm_model(I, H), SessionOptions().providers({provider}).deterministic(true));
  const Feeds short_feeds = {{"X", ramp({1000, 1, I})}};
  Outputs before = s.run(short_feeds);
  // Long enough that terminate() after 50 ms lands well inside the run.
  const int64_t T = steps_for(s, I, 1000.0);
  const Feeds feeds = {{"X", ramp({T, 1, I})}};
  // A first cancellable run makes what later ones reuse (oneDNN's blocks choose their
  // implementation and create their primitives once), which is not what is measured here.
  try {
    s.run(feeds, RunOptions().timeout(std::chrono::milliseconds(100)));
  } catch (const Error&) {
  }

  RunOptions ro;
  ro.cancellable(true);
  double latency = 0;
  Ended e = run_and_terminate(s, feeds, ro, std::chrono::milliseconds(50), &latency);
  EXPECT_EQ(e.code, ErrorCode::kCancelled) << provider << " T=" << T << ": " << e.message;
  EXPECT_NE(e.message.find("node 'long_lstm' (LSTM)"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("RunOptions::terminate()"), std::string::npos) << e.message;
  // Generous: the bound to meet is 10 ms (see CancelLatency), this one must hold on a loaded
  // machine.
  EXPECT_LT(latency, 200.0) << provider << " T=" << T;

  // A run after the cancelled one gives what a run before it gave.
  Outputs again = s.run(short_feeds);
  ASSERT_EQ(again[0].numel(), before[0].numel());
  for (int64_t i = 0; i < before[0].numel(); ++i)
    ASSERT_EQ(again[0].data<float>()[i], before[0].data<float>()[i]) << i;
}

TEST(Cancellation, TerminateEndsAReferenceLstmWithinTheBound) {
  expect_cancellable_lstm("reference", 64);
}

TEST(Cancellation, TerminateEndsAOnednnLstmWithinTheBound) {
  if (!have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  expect_cancellable_lstm("onednn", 256);
}

// A bidirectional LSTM with sequence lengths and every output, T long enough that a
// cancellable oneDNN run splits it into blocks (H = 256: blocks of 64 steps or fewer).
ModelBuilder bilstm_model(int64_t T, int64_t N, int64_t I, int64_t H) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-0.2f, 0.2f);
  auto random = [&](const Shape& shape) {
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    for (float& x : v) x = u(rng);
    return floats(shape, v);
  };
  ModelBuilder m;
  m.input("X", DType::kFloat32, {T, N, I});
  m.input("lens", DType::kInt32, {N});
  m.initializer("W", random({2, 4 * H, I}));
  m.initializer("R", random({2, 4 * H, H}));
  m.initializer("B", random({2, 8 * H}));
  m.output("Y", DType::kFloat32);
  m.output("Y_h", DType::kFloat32);
  m.output("Y_c", DType::kFloat32);
  auto& n = m.node("LSTM", {"X", "W", "R", "B", "lens"}, {"Y", "Y_h", "Y_c"}, "bilstm");
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", std::string("bidirectional"));
  return m;
}

TEST(Cancellation, OnednnBlocksGiveTheReferenceValues) {
  if (!have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const int64_t T = 300, N = 2, I = 32, H = 256;
  const ModelBuilder m = bilstm_model(T, N, I, H);
  Session ref = session_of(m, SessionOptions().providers({"reference"}));
  Session dnn = session_of(m, SessionOptions().providers({"onednn"}));
  for (const std::vector<int32_t>& lens :
       {std::vector<int32_t>{300, 300}, std::vector<int32_t>{300, 137}}) {
    const Feeds feeds = {{"X", ramp({T, N, I})}, {"lens", Tensor::from_vector<int32_t>({N}, lens)}};
    Outputs want = ref.run(feeds);
    Outputs got = dnn.run(feeds, RunOptions().cancellable(true));
    for (size_t k = 0; k < 3; ++k) {
      ASSERT_EQ(got[k].shape(), want[k].shape()) << k;
      for (int64_t i = 0; i < want[k].numel(); ++i) {
        const float w = want[k].data<float>()[i];
        ASSERT_NEAR(got[k].data<float>()[i], w, 1e-5 + 1e-3 * std::abs(w))
            << "output " << k << " element " << i << " lens[1]=" << lens[1];
      }
    }
  }
}

TEST(Cancellation, TerminatedBeforeTheRunEndsItAtOnce) {
  Session s = session_of(expand_model(4, 4), SessionOptions());
  RunOptions ro;
  ro.terminate();
  RunOptions copy = ro;  // copies share the flag
  EXPECT_TRUE(copy.terminated());
  expect_error(
      [&] {
        s.run({{"x", floats({1}, {1})}}, copy);
      },
      ErrorCode::kCancelled, {"RunOptions::terminate()", "before node 'bomb' (Expand)"});
  // Fresh options run normally.
  EXPECT_EQ(s.run({{"x", floats({1}, {1})}}, RunOptions())[0].numel(), 16);
}

TEST(Cancellation, DeadlineInThePast) {
  Session s = session_of(expand_model(4, 4), SessionOptions());
  RunOptions ro;
  ro.deadline(Clock::now() - std::chrono::seconds(1));
  expect_error(
      [&] {
        s.run({{"x", floats({1}, {1})}}, ro);
      },
      ErrorCode::kCancelled, {"deadline", "before node 'bomb' (Expand)"});
}

// A timeout past what the clock counts is never reached (converting it to the clock's
// nanoseconds would overflow); NaN is treated the same; a negative one has passed.
TEST(Cancellation, TimeoutsBeyondTheClockSaturate) {
  using std::chrono::duration;
  const auto never = Clock::time_point::max();
  EXPECT_EQ(RunOptions().timeout(std::chrono::milliseconds(INT64_MAX)).deadline(), never);
  EXPECT_EQ(RunOptions().timeout(duration<uint64_t, std::milli>(UINT64_MAX)).deadline(), never);
  EXPECT_EQ(RunOptions().timeout(std::chrono::hours(INT64_MAX / 2)).deadline(), never);
  EXPECT_EQ(
      RunOptions().timeout(duration<double>(std::numeric_limits<double>::infinity())).deadline(),
      never);
  EXPECT_EQ(
      RunOptions().timeout(duration<double>(std::numeric_limits<double>::quiet_NaN())).deadline(),
      never);
  const auto before = Clock::now();
  const auto soon = *RunOptions().timeout(std::chrono::seconds(60)).deadline();
  EXPECT_GE(soon, before + std::chrono::seconds(60));
  // The clock is read after the deadline is made: inside one EXPECT the order is unspecified.
  const auto passed = *RunOptions().timeout(std::chrono::milliseconds(-5)).deadline();
  const auto long_passed = *RunOptions().timeout(duration<double>(-1e300)).deadline();
  const auto after = Clock::now();
  EXPECT_LE(passed, after);
  EXPECT_LE(long_passed, after);
  // A run with a saturated timeout runs to the end.
  Session s = session_of(expand_model(2, 2), SessionOptions());
  const Outputs o =
      s.run({{"x", floats({1}, {3})}}, RunOptions().timeout(std::chrono::milliseconds(INT64_MAX)));
  EXPECT_EQ(o[0].data<float>()[3], 3.0f);
}

TEST(Cancellation, ShortDeadlineEndsALongRun) {
  for (const std::string provider : {"reference", "onednn"}) {
    if (!have_provider(provider)) continue;
    const int64_t I = 32;
    Session s = session_of(lstm_model(I, 256), SessionOptions().providers({provider}));
    const Feeds feeds = {{"X", ramp({steps_for(s, I, 1000.0), 1, I})}};
    // The first run also makes what later runs reuse (oneDNN's choice of implementation and
    // primitives for the blocks), which no deadline interrupts: only the second is timed.
    for (int i = 0; i < 2; ++i) {
      RunOptions ro;
      ro.timeout(std::chrono::milliseconds(30));
      const auto t0 = Clock::now();
      expect_error([&] { s.run(feeds, ro); }, ErrorCode::kCancelled,
                   {"deadline", "node 'long_lstm' (LSTM)"});
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (i == 1) {
        EXPECT_LT(ms, 30.0 + 200.0) << provider;
      }
    }
  }
}

// A Loop that counts to a trip count fed at run time, one Add per iteration.
ModelBuilder counting_loop() {
  ModelBuilder m;
  m.input("m", DType::kInt64, {});
  m.input("v0", DType::kFloat32, {1});
  m.initializer("one", floats({1}, {1}));
  m.output("v", DType::kFloat32);
  onnx::GraphProto body;
  body.set_name("body");
  body_input(body, "iter", 7);
  body_input(body, "cond_in", 9);
  body_input(body, "v_in", 1);
  auto* add = body.add_node();
  add->set_op_type("Add");
  add->add_input("v_in");
  add->add_input("one");
  add->add_output("v_out");
  auto* keep = body.add_node();
  keep->set_op_type("Identity");
  keep->add_input("cond_in");
  keep->add_output("cond_out");
  body.add_output()->set_name("cond_out");
  body.add_output()->set_name("v_out");
  auto& loop = m.node("Loop", {"m", "", "v0"}, {"v"}, "counter");
  set_attr(loop, "body", body);
  return m;
}

TEST(Cancellation, TerminateEndsALongLoop) {
  Session s = session_of(counting_loop(), SessionOptions());
  // Under the default cap of 10^7 iterations, and seconds long.
  const Feeds feeds = {{"m", Tensor::scalar<int64_t>(5'000'000)}, {"v0", floats({1}, {0})}};
  RunOptions ro;
  double latency = 0;
  Ended e = run_and_terminate(s, feeds, ro, std::chrono::milliseconds(50), &latency);
  EXPECT_EQ(e.code, ErrorCode::kCancelled) << e.message;
  EXPECT_NE(e.message.find("node 'counter' (Loop)"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("iteration"), std::string::npos) << e.message;
  EXPECT_LT(latency, 200.0);
  Outputs o = s.run({{"m", Tensor::scalar<int64_t>(5)}, {"v0", floats({1}, {0.5f})}});
  EXPECT_EQ(o[0].data<float>()[0], 5.5f);
}

// Not a check but a measurement: the time from terminate() on another thread to the run's
// return, over many trials, for a long oneDNN LSTM (cancellable) and a long Loop. Run with
//   build/tests/recur_unit_tests --gtest_also_run_disabled_tests --gtest_filter='CancelLatency.*'
void report_latency(const char* what, const Session& s, const Feeds& feeds, bool cancellable,
                    int trials) {
  std::vector<double> ms;
  int cancelled = 0;
  for (int i = 0; i < trials; ++i) {
    RunOptions ro;
    ro.cancellable(cancellable);
    double latency = 0;
    Ended e =
        run_and_terminate(s, feeds, ro, std::chrono::milliseconds(20 + (i * 7) % 30), &latency);
    cancelled += e.code == ErrorCode::kCancelled;
    ms.push_back(latency);
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "%s: %d trials, %d cancelled, terminate() to return: median %.3f ms, p90 %.3f ms, "
      "max %.3f ms\n",
      what, trials, cancelled, ms[ms.size() / 2], ms[ms.size() * 9 / 10], ms.back());
}

TEST(CancelLatency, DISABLED_Report) {
  const int trials = 50;
  if (have_provider("onednn")) {
    const int64_t T = 40000, I = 256, H = 512;
    Session s = session_of(lstm_model(I, H), SessionOptions().providers({"onednn"}));
    const Feeds feeds = {{"X", ramp({T, 1, I})}};
    try {  // the blocks' implementation choice and primitives, made once
      s.run(feeds, RunOptions().timeout(std::chrono::milliseconds(500)));
    } catch (const Error&) {
    }
    report_latency("onednn LSTM T=40000 I=256 H=512", s, feeds, true, trials);
    // One thread, a step of 0.6 ms on recur's row-team loop, which looks at every step.
    Session one =
        session_of(lstm_model(I, 1024), SessionOptions().providers({"onednn"}).threads(1));
    const Feeds few = {{"X", ramp({4000, 1, I})}};
    one.run({{"X", ramp({8, 1, I})}});
    report_latency("onednn LSTM T=4000 I=256 H=1024, one thread", one, few, true, trials);
  }
  {
    const int64_t T = 100000, I = 64, H = 128;
    Session s = session_of(lstm_model(I, H), SessionOptions().providers({"reference"}));
    report_latency("reference LSTM T=100000 I=64 H=128", s, {{"X", ramp({T, 1, I})}}, true, trials);
  }
  Session loop = session_of(counting_loop(), SessionOptions());
  report_latency("Loop of 5M Add iterations", loop,
                 {{"m", Tensor::scalar<int64_t>(5'000'000)}, {"v0", floats({1}, {0})}}, false,
                 trials);
}

}  // namespace
}  // namespace recur
