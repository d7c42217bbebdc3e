#include "runtime/provider/tuning_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

namespace recur {

namespace {

constexpr const char* kHeader = "recur-tuning-cache 1";

// Tabs and newlines would break the line format; names never need them.
std::string clean(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

// O_NONBLOCK: a FIFO put in the cache's place must not hang the session; fstat() then
// refuses anything but a regular file.
int open_regular(const std::string& path, std::string* problem) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *problem = "not a regular file";
    return -2;
  }
  return fd;
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The lock file beside the cache. Waits at most `limit` for another process: a run must not
// stall behind a stuck writer, and the entries are written again later.
int lock_file(const std::string& path, std::chrono::milliseconds limit) {
  const int fd = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() >= until) {
      ::close(fd);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return fd;
}

}  // namespace

TuningCache::TuningCache(std::string path, std::function<std::string()> env)
    : path_(std::move(path)), make_env_(std::move(env)) {}

TuningCache::TuningCache(std::string path, std::string env)
    : TuningCache(std::move(path), [env = std::move(env)] { return env; }) {}

TuningCache::~TuningCache() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending_.empty()) write_locked();
}

std::string TuningCache::default_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/recur/tuning-cache";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/recur/tuning-cache";
  return {};
}

TuningCache::Parsed TuningCache::read_file(const std::string& path, const std::string& env) {
  Parsed p;
  const int fd = open_regular(path, &p.problem);
  if (fd == -1) {
    p.missing = errno == ENOENT;
    if (!p.missing) p.problem = std::string("cannot be read: ") + std::strerror(errno);
    return p;
  }
  if (fd < 0) return p;
  std::string bytes;
  char buf[1 << 14];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  std::istringstream in(bytes);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    p.problem = "has no '" + std::string(kHeader) + "' header line";
    return p;
  }
  if (!std::getline(in, line) || line.rfind("env\t", 0) != 0) {
    p.problem = "has no env line";
    return p;
  }
  if (line.substr(4) != env) {
    p.problem = "was written for another machine or version (" + line.substr(4) + ")";
    return p;
  }
  // The end line counts the entries, so that a truncated file is told from a short one.
  while (std::getline(in, line)) {
    if (line.rfind("end ", 0) == 0) {
      if (line != "end " + std::to_string(p.entries.size()) || std::getline(in, line)) break;
      p.ok = true;
      return p;
    }
    const size_t t1 = line.find('\t');
    const size_t t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (line.rfind("entry\t", 0) != 0 || t2 == std::string::npos || t2 == t1 + 1 ||
        t2 + 1 == line.size() || line.find('\t', t2 + 1) != std::string::npos)
      break;
    p.entries[line.substr(t1 + 1, t2 - t1 - 1)] = line.substr(t2 + 1);
  }
  p.entries.clear();
  p.problem = "is corrupt or truncated";
  return p;
}

void TuningCache::load_locked() {
  if (loaded_) return;
  loaded_ = true;
  env_ = clean(make_env_());
  make_env_ = nullptr;
  Parsed p = read_file(path_, env_);
  if (p.ok) {
    entries_ = std::move(p.entries);
  } else if (!p.missing) {
    warning_ = "recur: tuning cache '" + path_ + "' " + p.problem + ": ignored, rewritten";
    std::fprintf(stderr, "%s\n", warning_.c_str());
  }
}

std::optional<std::string> TuningCache::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  load_locked();
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void TuningCache::record(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  load_locked();
  entries_[clean(key)] = clean(value);
  pending_[clean(key)] = clean(value);
  write_locked();
}

std::string TuningCache::warning() const {
  std::lock_guard<std::mutex> lock(mu_);
  return warning_;
}

// Under the lock file: the file's current entries (if it is ours and sound) merged with ours,
// written to a temporary file and renamed over the cache, so a reader sees the old file or
// the new one, never a mix.
bool TuningCache::write_locked() {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  const int lock = lock_file(path_, std::chrono::milliseconds(500));
  if (lock < 0) return false;
  Parsed current = read_file(path_, env_);
  std::map<std::string, std::string> all =
      current.ok ? std::move(current.entries) : std::map<std::string, std::string>{};
  for (const auto& [k, v] : pending_) all[k] = v;
  std::string text = std::string(kHeader) + "\nenv\t" + env_ + "\n";
  for (const auto& [k, v] : all) text += "entry\t" + k + "\t" + v + "\n";
  text += "end " + std::to_string(all.size()) + "\n";
  static std::atomic<unsigned> serial{0};
  const std::string tmp =
      path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial.fetch_add(1));
  bool ok = false;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ok = write_all(fd, text);
    ok = ::close(fd) == 0 && ok;
    ok = ok && ::rename(tmp.c_str(), path_.c_str()) == 0;
    if (!ok) ::unlink(tmp.c_str());
  }
  ::close(lock);
  if (ok) {
    for (const auto& [k, v] : all) entries_.emplace(k, v);
    pending_.clear();
  }
  return ok;
}

}  // namespace recur
