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
using testing::set_attr;

Tensor random_tensor(const Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : v) x = u(rng);
  return Tensor::from_vector(shape, v);
}

// Big enough at N=8 for the chooser to have several candidates to time (tuning_test.cc).
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

}  // namespace
}  // namespace recur

#endif  // RECUR_HAVE_ONEDNN
