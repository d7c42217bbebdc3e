// Concurrent run() calls on one oneDNN session: 4 threads run 50 times each, and every result
// must equal the single-threaded one, bit for bit. Each run has its own scratchpad
// (scratchpad_mode::user), so runs cannot clobber each other. The sessions keep their OpenMP
// teams whole (onednn.busy_cores=wait): a team that shrinks while CTest's other jobs hold a
// core may change the last bits (busy_cores_test.cc covers that way).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "recur/recur.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

// A bidirectional LSTM with peepholes and sequence lengths, X with symbolic T and N, so that
// primitives are created during the runs (concurrently, in the second test).
std::string lstm_model() {
  const int64_t I = 33, H = 65, D = 2;
  std::mt19937 rng(7);
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {-1, -1, I}, {"T", "N"});
  mb.input("sequence_lens", DType::kInt32, {-1}, {"N"});
  mb.input("initial_h", DType::kFloat32, {D, -1, H}, {"", "N"});
  mb.initializer("W", random_tensor({D, 4 * H, I}, rng));
  mb.initializer("R", random_tensor({D, 4 * H, H}, rng));
  mb.initializer("B", random_tensor({D, 8 * H}, rng));
  mb.initializer("P", random_tensor({D, 3 * H}, rng));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32).output("Y_c", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R", "B", "sequence_lens", "initial_h", "", "P"},
                    {"Y", "Y_h", "Y_c"}, "lstm");
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", std::string("bidirectional"));
  return mb.bytes();
}

std::vector<Feeds> feed_sets() {
  std::mt19937 rng(11);
  std::vector<Feeds> sets;
  // Equal lengths (one primitive per direction) and mixed ones, 0 included (time segments).
  const std::vector<std::vector<int32_t>> lens = {{6, 6, 6, 6, 6, 6, 6}, {6, 0, 3, 1, 6, 2, 5}};
  for (const auto& l : lens) {
    Feeds f;
    f.emplace_back("X", random_tensor({6, 7, 33}, rng));
    f.emplace_back("sequence_lens", Tensor::from_vector<int32_t>({7}, l));
    f.emplace_back("initial_h", random_tensor({2, 7, 65}, rng));
    sets.push_back(std::move(f));
  }
  return sets;
}

bool identical(const Outputs& a, const Outputs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype()) return false;
    if (std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0) return false;
  }
  return true;
}

// 4 threads x 50 runs, alternating the feed sets; counts results that differ from `want`.
int hammer(const Session& s, const std::vector<Feeds>& feeds, const std::vector<Outputs>& want,
           std::atomic<int>& errors) {
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const size_t k = static_cast<size_t>((i + t) % 2);
        try {
          if (!identical(s.run(feeds[k]), want[k])) ++mismatches;
        } catch (const Error&) {
          ++errors;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  return mismatches.load();
}

TEST(OnednnConcurrency, FourThreadsFiftyRunsEqualSingleThreaded) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string model = lstm_model();
  const auto feeds = feed_sets();
  SessionOptions o;
  o.providers({"onednn"}).threads(2).set("onednn.busy_cores", "wait");
  Session s = Session::from_bytes(model.data(), model.size(), o);
  ASSERT_EQ(s.assignment()[0].provider, "onednn");
  std::vector<Outputs> want;
  for (const auto& f : feeds) want.push_back(s.run(f));
  std::atomic<int> errors{0};
  EXPECT_EQ(hammer(s, feeds, want, errors), 0);
  EXPECT_EQ(errors.load(), 0);
}

TEST(OnednnConcurrency, PrimitivesCreatedByConcurrentFirstRuns) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const std::string model = lstm_model();
  const auto feeds = feed_sets();
  // Untimed choices are deterministic, so a second session makes the same primitives.
  SessionOptions o;
  o.providers({"onednn"}).threads(2).set("onednn.tune", "0").set("onednn.busy_cores", "wait");
  Session single = Session::from_bytes(model.data(), model.size(), o);
  std::vector<Outputs> want;
  for (const auto& f : feeds) want.push_back(single.run(f));
  Session fresh = Session::from_bytes(model.data(), model.size(), o);
  std::atomic<int> errors{0};
  EXPECT_EQ(hammer(fresh, feeds, want, errors), 0);
  EXPECT_EQ(errors.load(), 0);
}

// Whole models whose glue (Conv, pooling, MatMul, Gemm, Softmax, eltwise) runs on oneDNN too:
// those kernels re-point memory objects leased per run (ArgsPool), which concurrent runs must
// not share.
TEST(OnednnConcurrency, WholeModelsFourThreadsFiftyRuns) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  for (const char* name : {"crnn", "attention_lstm_classifier", "rnnoise_gru"}) {
    const std::string dir = std::string(RECUR_SOURCE_DIR) + "/models/" + name;
    Feeds f;
    for (int k = 0;; ++k) {
      const std::string pb = dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb";
      if (!std::filesystem::exists(pb)) break;
      std::string input;
      Result<Tensor> t = read_tensor_pb(pb, &input);
      ASSERT_TRUE(t.ok()) << t.status().message();
      f.emplace_back(input, *t);
    }
    ASSERT_FALSE(f.empty()) << dir;
    SessionOptions o;
    o.providers({"onednn", "reference"}).threads(2).set("onednn.busy_cores", "wait");
    Session s(dir + "/model.onnx", o);
    int on_onednn = 0;
    for (const auto& a : s.assignment()) on_onednn += a.provider == "onednn";
    EXPECT_GE(on_onednn, 2) << name;
    const std::vector<Feeds> feeds = {f, f};
    const std::vector<Outputs> want = {s.run(f), s.run(f)};
    std::atomic<int> errors{0};
    EXPECT_EQ(hammer(s, feeds, want, errors), 0) << name;
    EXPECT_EQ(errors.load(), 0) << name;
  }
}

// The int8 LSTM with an R above one core's L2 (H=1024: 4 MiB of int8) times batch slices
// against a team sharing one primitive, run by run (team_tuner.h): concurrent runs share the
// tuner and both ways' plans, and every result has the bits of a one-thread session.
TEST(OnednnConcurrency, Int8ThreadingTunerUnderConcurrentRuns) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "this build has no oneDNN provider";
  const int64_t I = 16, H = 1024, T = 3, N = 8;
  std::mt19937 rng(19);
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {T, N, I});
  mb.initializer("W", random_tensor({1, 4 * H, I}, rng, 0.03f));
  mb.initializer("R", random_tensor({1, 4 * H, H}, rng, 0.03f));
  mb.initializer("B", random_tensor({1, 8 * H}, rng, 0.03f));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32).output("Y_c", DType::kFloat32);
  set_attr(mb.node("LSTM", {"X", "W", "R", "B"}, {"Y", "Y_h", "Y_c"}, "lstm"), "hidden_size", H);
  const std::string model = mb.bytes();
  SessionOptions one, two;
  one.providers({"onednn"}).threads(1).cpu_precision(SessionOptions::Precision::kInt8);
  two = one;
  two.threads(2);
  Session s1 = Session::from_bytes(model.data(), model.size(), one);
  Session s2 = Session::from_bytes(model.data(), model.size(), two);
  std::vector<Feeds> feeds;
  std::vector<Outputs> want;
  for (int k = 0; k < 2; ++k) {
    feeds.push_back({{"X", random_tensor({T, N, I}, rng, 1.0f)}});
    want.push_back(s1.run(feeds.back()));
  }
  std::atomic<int> errors{0};
  EXPECT_EQ(hammer(s2, feeds, want, errors), 0);
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
}  // namespace recur
