// The persistent tuning cache (docs/tuning-cache.md): the file format, corruption handling
// and several writers at once. The oneDNN chooser's use of it is in
// tests/providers/onednn/tuning_cache_test.cc.
#include "runtime/provider/tuning_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace recur {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        fs::temp_directory_path() / ("recur-tc-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TuningCache, RecordsAndFindsAcrossObjects) {
  TempDir dir;
  const std::string path = dir.file("sub/cache");
  {
    TuningCache c(path, "env-a");
    EXPECT_FALSE(c.find("k1"));
    c.record("k1", "v1");
  }
  TuningCache again(path, "env-a");
  ASSERT_TRUE(again.find("k1"));
  EXPECT_EQ(*again.find("k1"), "v1");
  EXPECT_EQ(again.warning(), "");
  // The format as documented: header, env, entries, end line with the count.
  EXPECT_EQ(read_text(path), "recur-tuning-cache 1\nenv\tenv-a\nentry\tk1\tv1\nend 1\n");
}

// The machine's description reaches oneDNN's ISA detection and /proc/cpuinfo: a session
// whose nodes never consult the cache must not compute it, and one that does computes it once.
TEST(TuningCache, EnvIsComputedOnFirstUseOnly) {
  TempDir dir;
  const std::string path = dir.file("cache");
  int calls = 0;
  auto env = [&calls] {
    ++calls;
    return std::string("env-lazy");
  };
  {
    TuningCache unused(path, env);
    EXPECT_EQ(calls, 0);
  }
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(fs::exists(path));
  {
    TuningCache c(path, env);
    EXPECT_FALSE(c.find("k1"));
    EXPECT_EQ(calls, 1);
    c.record("k1", "v1");
    EXPECT_TRUE(c.find("k1"));
    EXPECT_EQ(calls, 1);
  }
  EXPECT_EQ(read_text(path), "recur-tuning-cache 1\nenv\tenv-lazy\nentry\tk1\tv1\nend 1\n");
}

TEST(TuningCache, ForeignEnvIsNotTrustedAndIsRewritten) {
  TempDir dir;
  const std::string path = dir.file("cache");
  write_text(path, "recur-tuning-cache 1\nenv\tenv-other\nentry\tk1\tv1\nend 1\n");
  TuningCache c(path, "env-a");
  EXPECT_FALSE(c.find("k1"));
  EXPECT_NE(c.warning().find("another machine or version"), std::string::npos) << c.warning();
  c.record("k2", "v2");
  EXPECT_EQ(read_text(path), "recur-tuning-cache 1\nenv\tenv-a\nentry\tk2\tv2\nend 1\n");
}

TEST(TuningCache, CorruptFilesAreNotTrusted) {
  TempDir dir;
  const std::string good = "recur-tuning-cache 1\nenv\te\nentry\tk\tv\nend 1\n";
  const std::vector<std::string> bad = {
      "\x01\x02garbage\xff",
      good.substr(0, good.size() - 7),                       // truncated: no end line
      "recur-tuning-cache 2\nenv\te\nentry\tk\tv\nend 1\n",  // another format version
      "recur-tuning-cache 1\nenv\te\nentry\tk\tv\nend 2\n",  // the count disagrees
      "recur-tuning-cache 1\nenv\te\nentry\tk\nend 1\n",     // an entry without a value
      "",
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    const std::string path = dir.file("cache" + std::to_string(i));
    write_text(path, bad[i]);
    TuningCache c(path, "e");
    EXPECT_FALSE(c.find("k")) << "case " << i;
    EXPECT_NE(c.warning().find("ignored, rewritten"), std::string::npos) << "case " << i;
    c.record("k2", "v2");
    const TuningCache::Parsed p = TuningCache::read_file(path, "e");
    EXPECT_TRUE(p.ok) << "case " << i;
    EXPECT_EQ(p.entries.size(), 1u) << "case " << i;
  }
  // The good file itself is trusted, so the cases above fail for their defect alone.
  write_text(dir.file("good"), good);
  TuningCache c(dir.file("good"), "e");
  EXPECT_TRUE(c.find("k"));
}

TEST(TuningCache, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string path = dir.file("cache");
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  TuningCache c(path, "e");
  EXPECT_FALSE(c.find("k"));  // would hang on a blocking open
  EXPECT_NE(c.warning().find("not a regular file"), std::string::npos) << c.warning();
  c.record("k", "v");
  EXPECT_TRUE(TuningCache::read_file(path, "e").ok);
}

// Threads and processes record different keys into one file: every write keeps the others'
// entries (merge under the lock), and a reader never sees a partial file (rename).
TEST(TuningCache, ConcurrentWritersKeepTheUnion) {
  TempDir dir;
  const std::string path = dir.file("cache");
  constexpr int kProcs = 3, kThreads = 3, kEach = 15;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int k = 0; k < kEach; ++k) {
        TuningCache c(path, "e");
        c.record("proc" + std::to_string(p) + "-" + std::to_string(k), "v");
      }
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  std::atomic<bool> done{false};
  std::atomic<int> bad_reads{0};
  std::thread reader([&] {
    while (!done) {
      const TuningCache::Parsed r = TuningCache::read_file(path, "e");
      if (!r.ok && !r.missing) ++bad_reads;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int k = 0; k < kEach; ++k) {
        TuningCache c(path, "e");
        c.record("thread" + std::to_string(t) + "-" + std::to_string(k), "v");
      }
    });
  }
  for (auto& w : writers) w.join();
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  done = true;
  reader.join();
  EXPECT_EQ(bad_reads.load(), 0);
  const TuningCache::Parsed r = TuningCache::read_file(path, "e");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.entries.size(), static_cast<size_t>((kProcs + kThreads) * kEach));
}

}  // namespace
}  // namespace recur
