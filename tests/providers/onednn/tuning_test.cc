// The oneDNN RNN chooser's timing (issue 16): a run never waits while another thread times
// candidates for its shape, and with SessionOptions::deterministic(true) nothing is timed, so
// two sessions agree bitwise even with onednn.tune=1. A test hook holds the tuner back.
#ifdef RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "providers/onednn/rnn/rnn_chooser.h"
#include "recur/recur.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

// An LSTM with symbolic T and N (chosen at the first run of a shape, not at load), big enough
// at N=8 for the chooser to have threaded candidates to time.
std::string lstm_model() {
  const int64_t I = 32, H = 64;
  std::mt19937 rng(3);
  ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {-1, -1, I}, {"T", "N"});
  mb.initializer("W", random_tensor({1, 4 * H, I}, rng));
  mb.initializer("R", random_tensor({1, 4 * H, H}, rng));
  mb.initializer("B", random_tensor({1, 8 * H}, rng));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R", "B"}, {"Y", "Y_h"}, "lstm");
  set_attr(n, "hidden_size", H);
  return mb.bytes();
}

Feeds feeds() {
  std::mt19937 rng(5);
  return {{"X", random_tensor({6, 8, 32}, rng)}};
}

bool identical(const Outputs& a, const Outputs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape()) return false;
    if (std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0) return false;
  }
  return true;
}

SessionOptions options(bool deterministic) {
  SessionOptions o;
  // No tuning cache: these tests watch the timing itself.
  o.providers({"onednn"}).threads(2).set("onednn.tune", "1").deterministic(deterministic);
  o.set("onednn.impl", "primitive");  // the oneDNN chooser, not the small-cell LSTM
  o.set("onednn.tuning_cache", "off");
  o.set("onednn.busy_cores", "wait");  // compared bitwise: no smaller team while CTest runs
  return o;
}

// Counts the hook's calls; the first caller waits for `release`.
class HeldTuner {
 public:
  HeldTuner() {
    onednn::rnn::set_tuning_hook([this] {
      if (calls_.fetch_add(1) == 0) {
        entered_.set_value();
        release_future_.wait();
      }
    });
  }
  ~HeldTuner() {
    release();
    onednn::rnn::set_tuning_hook(nullptr);
  }
  void release() {
    if (!released_.exchange(true)) release_.set_value();
  }
  bool wait_entered(std::chrono::seconds limit) {
    return entered_future_.wait_for(limit) == std::future_status::ready;
  }
  int calls() const { return calls_.load(); }

 private:
  std::atomic<int> calls_{0};
  std::atomic<bool> released_{false};
  std::promise<void> entered_, release_;
  std::future<void> entered_future_ = entered_.get_future();
  std::shared_future<void> release_future_ = release_.get_future().share();
};

// A timed winner replaces the fixed rule's choice only where it beat it by 10% (rnn_chooser.h,
// prefer_rule): a probe's noise around a tie keeps the rule's choice.
TEST(OnednnTuning, ATimedChoiceMustBeatTheRuleByATenth) {
  using onednn::rnn::Choice;
  const std::vector<Choice> cands = {{false, 1, 1}, {false, 1, 2}, {true, 2, 1}};
  const Choice rule = cands[2];
  onednn::rnn::RaceTimes t;
  t.ok = {true, true, true};
  t.med = {20.0, 13.0, 14.0};
  EXPECT_EQ(onednn::rnn::prefer_rule(cands, rule, t, 1), 2u) << "7% faster keeps the rule";
  t.med = {20.0, 12.0, 14.0};
  EXPECT_EQ(onednn::rnn::prefer_rule(cands, rule, t, 1), 1u) << "14% faster wins";
  t.med = {20.0, 13.0, 14.0};
  t.ok = {true, true, false};
  EXPECT_EQ(onednn::rnn::prefer_rule(cands, rule, t, 1), 1u) << "the rule's choice dropped out";
  t.ok = {true, true, true};
  EXPECT_EQ(onednn::rnn::prefer_rule(cands, Choice{false, 4, 1}, t, 1), 1u)
      << "the rule's choice was no candidate";
  EXPECT_EQ(onednn::rnn::prefer_rule(cands, rule, t, 3), 3u) << "no winner stays none";
}

TEST(OnednnTuning, RunIsNotBlockedWhileAnotherThreadTunes) {
  const std::string model = lstm_model();
  const Feeds f = feeds();
  // The rule's choice, which runs during the timing must take: a deterministic session's.
  Session rule = Session::from_bytes(model.data(), model.size(), options(true));
  const Outputs rule_out = rule.run(f);

  HeldTuner tuner;
  Session s = Session::from_bytes(model.data(), model.size(), options(false));
  std::atomic<bool> tuned{false};
  std::thread first([&] {
    s.run(f);
    tuned = true;
  });
  // Generous bounds: they only keep a broken build from hanging, they time nothing.
  if (!tuner.wait_entered(std::chrono::seconds(120))) {
    tuner.release();
    first.join();
    FAIL() << "the first run never timed its candidates";
  }
  auto other = std::async(std::launch::async, [&] {
    Outputs out = s.run(f);
    const bool before = !tuned.load();
    return std::make_pair(before, out);
  });
  const bool finished = other.wait_for(std::chrono::seconds(120)) == std::future_status::ready;
  tuner.release();
  first.join();
  EXPECT_TRUE(finished) << "a run of the same shape waited for the tuner";
  auto [before, out] = other.get();
  EXPECT_TRUE(before) << "the run finished only after the timing";
  EXPECT_TRUE(identical(out, rule_out)) << "the run during the timing did not take the rule";
  EXPECT_EQ(tuner.calls(), 1);
}

TEST(OnednnTuning, DeterministicSessionsNeverTimeAndAgreeBitwise) {
  const std::string model = lstm_model();
  const Feeds f = feeds();
  HeldTuner tuner;
  tuner.release();  // nothing waits in the hook here; it only counts
  {
    // Timing does happen for this shape without deterministic(true), else this test proves
    // nothing.
    Session timed = Session::from_bytes(model.data(), model.size(), options(false));
    timed.run(f);
    ASSERT_GE(tuner.calls(), 1);
  }
  const int before = tuner.calls();
  Session a = Session::from_bytes(model.data(), model.size(), options(true));
  Session b = Session::from_bytes(model.data(), model.size(), options(true));
  const Outputs oa = a.run(f);
  const Outputs ob = b.run(f);
  EXPECT_EQ(tuner.calls(), before) << "a deterministic session timed candidates";
  EXPECT_TRUE(identical(oa, ob));
}

}  // namespace
}  // namespace recur

#endif  // RECUR_HAVE_ONEDNN
