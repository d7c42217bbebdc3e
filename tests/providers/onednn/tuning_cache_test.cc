// The oneDNN RNN chooser with a persistent tuning cache (issue 15): a second session takes
// the recorded choice without timing; a missing, corrupt or foreign cache is timed again.
// The tuning hook counts the timings. Each test has its own cache file.
#ifdef RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_chooser.h"
#include "recur/recur.h"
#include "runtime/provider/tuning_cache.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

namespace fs = std::filesystem;
using testing::ModelBuilder;
using testing::random_tensor;
using testing::set_attr;

// Big enough at N=8 for the chooser to have several candidates to time (tuning_test.cc).
// static_n > 0 fixes X's shape at T=6, N=static_n, so that the choice is made at load.
std::string lstm_model(int64_t static_n = 0) {
  const int64_t I = 32, H = 64;
  std::mt19937 rng(3);
  ModelBuilder mb(14);
  if (static_n > 0) {
    mb.input("X", DType::kFloat32, {6, static_n, I});
  } else {
    mb.input("X", DType::kFloat32, {-1, -1, I}, {"T", "N"});
  }
  mb.initializer("W", random_tensor({1, 4 * H, I}, rng));
  mb.initializer("R", random_tensor({1, 4 * H, H}, rng));
  mb.initializer("B", random_tensor({1, 8 * H}, rng));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32);
  auto& n = mb.node("LSTM", {"X", "W", "R", "B"}, {"Y", "Y_h"}, "lstm");
  set_attr(n, "hidden_size", H);
  return mb.bytes();
}

Feeds feeds(int64_t N) {
  std::mt19937 rng(5);
  return {{"X", random_tensor({6, N, 32}, rng)}};
}

class OnednnTuningCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("recur-tcs-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "cache").string();
    onednn::rnn::set_tuning_hook([this] { ++timings_; });
  }
  void TearDown() override {
    onednn::rnn::set_tuning_hook(nullptr);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  SessionOptions options(const std::string& cache) const {
    SessionOptions o;
    o.providers({"onednn"}).threads(2).set("onednn.tune", "1").set("onednn.tuning_cache", cache);
    o.set("onednn.impl", "primitive");  // the oneDNN chooser, not the small-cell LSTM
    return o;
  }
  // Runs a fresh session on N rows; returns how many buckets it timed.
  int run_session(int64_t N, const std::string& cache) {
    const int before = timings_;
    const std::string m = lstm_model();
    Session s = Session::from_bytes(m.data(), m.size(), options(cache));
    s.run(feeds(N));
    return timings_ - before;
  }
  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void write(const std::string& t) const { std::ofstream(path_, std::ios::binary) << t; }

  fs::path dir_;
  std::string path_;
  std::atomic<int> timings_{0};
};

TEST_F(OnednnTuningCache, SecondSessionTakesTheRecordedChoiceWithoutTiming) {
  ASSERT_EQ(run_session(8, path_), 1);
  const TuningCache::Parsed p = TuningCache::read_file(path_, onednn::tuning_env());
  ASSERT_TRUE(p.ok) << text();
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_NE(p.entries.begin()->first.find("cell=LSTM"), std::string::npos)
      << p.entries.begin()->first;
  EXPECT_EQ(run_session(8, path_), 0) << "a cached bucket was timed again";
}

TEST_F(OnednnTuningCache, MissTimesAndAddsTheNewBucket) {
  ASSERT_EQ(run_session(8, path_), 1);
  EXPECT_EQ(run_session(4, path_), 1) << "another batch size is another bucket";
  EXPECT_EQ(TuningCache::read_file(path_, onednn::tuning_env()).entries.size(), 2u);
  EXPECT_EQ(run_session(4, path_), 0);
}

TEST_F(OnednnTuningCache, OffNeverReadsNorWrites) {
  ASSERT_EQ(run_session(8, path_), 1);
  EXPECT_EQ(run_session(8, "off"), 1);
  EXPECT_EQ(run_session(8, ""), 1);
}

TEST_F(OnednnTuningCache, CorruptFilesAreTimedAgainAndRewritten) {
  ASSERT_EQ(run_session(8, path_), 1);
  const std::string good = text();
  const std::vector<std::string> bad = {
      "garbage\n\x01\xfe",
      good.substr(0, good.rfind("end ")),  // truncated: the entry is there, the end line not
      "recur-tuning-cache 0" + good.substr(good.find('\n')),  // a wrong version line
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    write(bad[i]);
    ::testing::internal::CaptureStderr();
    const int timed = run_session(8, path_);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(timed, 1) << "case " << i << ": a bad file was trusted";
    EXPECT_NE(err.find("tuning cache"), std::string::npos) << "case " << i << ": " << err;
    EXPECT_TRUE(TuningCache::read_file(path_, onednn::tuning_env()).ok)
        << "case " << i << ": not rewritten: " << text();
  }
}

TEST_F(OnednnTuningCache, EntriesOfAnotherVersionAreNotUsed) {
  ASSERT_EQ(run_session(8, path_), 1);
  const std::string env = onednn::tuning_env();
  for (const std::string part : {";recur=", ";onednn="}) {
    std::string t = text();
    const size_t at = t.find(part);
    ASSERT_NE(at, std::string::npos) << t;
    t.insert(at + part.size(), "0.0.0-other-");
    write(t);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run_session(8, path_), 1) << part << ": an entry of another version was used";
    ::testing::internal::GetCapturedStderr();
    EXPECT_NE(text().find("env\t" + env + "\n"), std::string::npos) << text();
  }
}

TEST_F(OnednnTuningCache, DeterministicSessionsIgnoreTheCache) {
  ASSERT_EQ(run_session(8, path_), 1);
  const std::string before = text();
  const std::string m = lstm_model();
  Session s = Session::from_bytes(m.data(), m.size(), options(path_).deterministic(true));
  s.run(feeds(4));
  EXPECT_EQ(timings_.load(), 1);
  EXPECT_EQ(text(), before) << "a deterministic session wrote the cache";
}

TEST_F(OnednnTuningCache, SessionOptionTuningCacheNamesTheFile) {
  const std::string m = lstm_model();
  SessionOptions o;
  o.providers({"onednn"}).threads(2).set("onednn.tune", "1").tuning_cache(path_);
  o.set("onednn.impl", "primitive");
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  EXPECT_EQ(timings_.load(), 1);
  ASSERT_TRUE(TuningCache::read_file(path_, onednn::tuning_env()).ok) << text();
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  EXPECT_EQ(timings_.load(), 1) << "the file named by SessionOptions::tuning_cache was not read";
  // "off" neither reads it nor writes one.
  fs::remove(path_);
  o.tuning_cache("off");
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  EXPECT_EQ(timings_.load(), 2);
  EXPECT_FALSE(fs::exists(path_));
  // The provider setting wins over the option.
  o.tuning_cache((dir_ / "other").string()).set("onednn.tuning_cache", path_);
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_FALSE(fs::exists(dir_ / "other"));
}

// Every entry depends on the CPU model and ISA, the oneDNN and recur versions (the env line),
// and on the cell, direction, precision, shape bucket and threads (the key).
TEST_F(OnednnTuningCache, KeyAndEnvNameEverythingTheChoiceDependsOn) {
  ASSERT_EQ(run_session(8, path_), 1);
  const TuningCache::Parsed p = TuningCache::read_file(path_, onednn::tuning_env());
  ASSERT_TRUE(p.ok) << text();
  ASSERT_EQ(p.entries.size(), 1u);
  const std::string key = p.entries.begin()->first;
  for (const char* part : {"cell=LSTM;", ";dir=forward;", ";dtype=f32;", ";N=8;", ";I=32;",
                           ";H=64;", ";T=1;", ";threads=2;"})
    EXPECT_NE(key.find(part), std::string::npos) << part << " missing from " << key;
  const std::string env = onednn::tuning_env();
  for (const char* part : {"cpu=", ";isa=", ";onednn=", ";recur="})
    EXPECT_NE(env.find(part), std::string::npos) << part << " missing from " << env;
  EXPECT_NE(text().find("env\t" + env + "\n"), std::string::npos) << text();
  // One thread is another entry.
  const std::string m = lstm_model();
  SessionOptions o = options(path_);
  o.threads(1);
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  const TuningCache::Parsed q = TuningCache::read_file(path_, onednn::tuning_env());
  ASSERT_EQ(q.entries.size(), 2u) << text();
  EXPECT_NE(text().find(";threads=1;"), std::string::npos) << text();
}

// A bf16 or int8 session must never take an fp32 entry, nor the reverse.
// A bf16 kernel has winners of its own (int8 LSTMs run rnn_int8, which never times).
TEST_F(OnednnTuningCache, PrecisionsHaveEntriesOfTheirOwn) {
  const unsigned isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const unsigned bf16 = static_cast<unsigned>(dnnl_cpu_isa_avx512_core_bf16);
  if ((isa & bf16) != bf16) GTEST_SKIP() << "the CPU has no native bf16, so nodes stay fp32";
  ASSERT_EQ(run_session(8, path_), 1);
  const std::string m = lstm_model();
  int expected = 1;
  {
    SessionOptions o = options(path_);
    o.cpu_precision(SessionOptions::Precision::kBf16);
    Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
    EXPECT_EQ(timings_.load(), ++expected) << "the fp32 entry was taken for bf16";
  }
  const TuningCache::Parsed p = TuningCache::read_file(path_, onednn::tuning_env());
  ASSERT_EQ(p.entries.size(), 2u) << text();
  for (const char* dt : {";dtype=f32;", ";dtype=bf16;"}) {
    int n = 0;
    for (const auto& [k, v] : p.entries) n += k.find(dt) != std::string::npos;
    EXPECT_EQ(n, 1) << dt << "\n" << text();
  }
  // The provider setting onednn.precision keys the same way as the session option.
  SessionOptions o = options(path_);
  o.set("onednn.precision", "bf16");
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  EXPECT_EQ(timings_.load(), expected);
}

// By default nothing is timed: a bucket the cache lacks takes the rule and is not recorded,
// and one the cache holds takes the entry.
TEST_F(OnednnTuningCache, DefaultNeverTimesButReadsTheCache) {
  const std::string m = lstm_model(8);
  SessionOptions o;
  o.providers({"onednn"}).threads(2).set("onednn.tuning_cache", path_).set("onednn.verbose", "1");
  o.set("onednn.impl", "primitive");
  ::testing::internal::CaptureStderr();
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(timings_.load(), 0) << "the default timed candidates";
  EXPECT_FALSE(fs::exists(path_)) << "an untimed choice was recorded: " << text();
  EXPECT_NE(err.find("untimed rule"), std::string::npos) << err;
  ASSERT_EQ(run_session(8, path_), 1);  // tune=1 fills the cache
  ::testing::internal::CaptureStderr();
  Session::from_bytes(m.data(), m.size(), o).run(feeds(8));
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(timings_.load(), 1);
  EXPECT_NE(err.find("tuning cache"), std::string::npos) << err;
}

// tune=1 times a static shape while the session is created; tune=lazy at its first run, and
// records the result.
TEST_F(OnednnTuningCache, LazyTimesAtTheFirstRunNotAtLoad) {
  const std::string m = lstm_model(8);
  SessionOptions eager = options(path_);
  {
    Session s = Session::from_bytes(m.data(), m.size(), eager);
    EXPECT_EQ(timings_.load(), 1) << "tune=1 did not time at load";
  }
  fs::remove(path_);
  SessionOptions lazy = options(path_);
  lazy.set("onednn.tune", "lazy");
  Session s = Session::from_bytes(m.data(), m.size(), lazy);
  EXPECT_EQ(timings_.load(), 1) << "tune=lazy timed at load";
  const Outputs first = s.run(feeds(8));
  EXPECT_EQ(timings_.load(), 2) << "tune=lazy did not time at the first run";
  const Outputs second = s.run(feeds(8));
  EXPECT_EQ(timings_.load(), 2) << "tune=lazy timed again";
  EXPECT_EQ(TuningCache::read_file(path_, onednn::tuning_env()).entries.size(), 1u) << text();
  // Whatever was chosen, the results agree with the rule's to rounding.
  const Tensor& a = first["Y"];
  const Tensor& b = second["Y"];
  ASSERT_EQ(a.numel(), b.numel());
  for (int64_t i = 0; i < a.numel(); ++i)
    ASSERT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5f) << i;
}

}  // namespace
}  // namespace recur

#endif  // RECUR_HAVE_ONEDNN
