#include "providers/onednn/common/busy_cores.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <ctime>
#include <mutex>

namespace recur::onednn {

namespace {

constexpr int64_t kWindowMs = 100;

int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Reads the cpu lines at the start of /proc/stat into `buf`; the rest (interrupt counts, which
// can run to tens of kilobytes) is not needed. Returns the bytes read, or -1.
ssize_t read_proc_stat(std::span<char> buf) {
  const int fd = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return static_cast<ssize_t>(got);
}

class Sampler {
 public:
  int taken() {
    if (const int o = override_.load(std::memory_order_relaxed); o >= 0) return o;
    const int64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
    if (now >= next_ns_.load(std::memory_order_relaxed)) {
      // One thread samples; the others go on with the last count rather than wait.
      std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
      if (lock.owns_lock() && now >= next_ns_.load(std::memory_order_relaxed)) sample();
    }
    return taken_.load(std::memory_order_relaxed);
  }

  int usable() {
    if (const int o = override_.load(std::memory_order_relaxed); o >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      const int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
      return std::max(1, n - o);
    }
    taken();
    return usable_.load(std::memory_order_relaxed);
  }

  void override_taken(int cores) { override_.store(cores < 0 ? -1 : cores); }

  std::atomic<uint64_t> smaller_runs{0};
  std::atomic<int> leased{0};

 private:
  void sample() {
    const int64_t wall = clock_ns(CLOCK_MONOTONIC);
    next_ns_.store(clock_ns(CLOCK_MONOTONIC_COARSE) + kWindowMs * 1000000,
                   std::memory_order_relaxed);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return;
    std::array<int, CPU_SETSIZE> cpus{};
    size_t n = 0;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus[n++] = c;
    const ssize_t got = read_proc_stat(text_);
    CpuTicks ticks;
    if (n == 0 || got <= 0 ||
        !parse_proc_stat(std::span<const char>(text_.data(), static_cast<size_t>(got)),
                         std::span<const int>(cpus.data(), n), ticks)) {
      return;  // no accounting to go by (no /proc): the team stays whole
    }
    const int64_t own = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    // getpriority returns -1 for nice -1 as for a failure: either way, not lowered.
    errno = 0;
    const int own_nice = getpriority(PRIO_PROCESS, 0);
    const uint64_t busy = contending_ticks(ticks, errno == 0 ? own_nice : 0);
    // The window must not span a change of affinity or of this process's priority: its tick
    // sums would not compare.
    if (have_ && n == cpus_ && busy >= prev_busy_ && wall > prev_wall_ &&
        (own_nice > 0) == (prev_nice_ > 0)) {
      static const double hz = static_cast<double>(std::max(1L, sysconf(_SC_CLK_TCK)));
      const double busy_s = static_cast<double>(busy - prev_busy_) / hz;
      const double own_s = static_cast<double>(own - prev_own_) * 1e-9;
      const double others =
          std::max(0.0, busy_s - own_s) / (static_cast<double>(wall - prev_wall_) * 1e-9);
      const int t = std::min(taken_after_window(others, taken_.load()), static_cast<int>(n) - 1);
      taken_.store(std::max(t, 0), std::memory_order_relaxed);
    }
    usable_.store(std::max(1, static_cast<int>(n) - taken_.load()), std::memory_order_relaxed);
    have_ = true;
    cpus_ = n;
    prev_busy_ = busy;
    prev_nice_ = own_nice;
    prev_own_ = own;
    prev_wall_ = wall;
  }

  std::mutex mu_;
  std::atomic<int64_t> next_ns_{0};
  std::atomic<int> taken_{0};
  std::atomic<int> usable_{1 << 20};
  std::atomic<int> override_{-1};
  // The previous sample, under mu_.
  bool have_ = false;
  size_t cpus_ = 0;
  uint64_t prev_busy_ = 0;  // contending_ticks
  int prev_nice_ = 0;
  int64_t prev_own_ = 0;
  int64_t prev_wall_ = 0;
  std::array<char, 1 << 16> text_{};
};

Sampler& sampler() {
  static Sampler s;
  return s;
}

}  // namespace

int taken_after_window(double others, int before) {
  if (!(others >= 0)) return before;  // NaN: no evidence either way
  const auto up = static_cast<int>(std::floor(others + 0.6));
  const auto down = static_cast<int>(std::floor(others + 0.75));
  if (up > before) return up;
  if (down < before) return down;
  return before;
}

bool parse_proc_stat(std::span<const char> text, std::span<const int> cpus, CpuTicks& out) {
  out = {};
  size_t found = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const char* eol = std::find(p, end, '\n');
    // "cpuN user nice system idle iowait irq softirq steal guest guest_nice"; "cpu " is the sum.
    if (eol - p > 3 && p[0] == 'c' && p[1] == 'p' && p[2] == 'u' && p[3] >= '0' && p[3] <= '9') {
      int cpu = -1;
      const char* q = p + 3;
      auto [after, ec] = std::from_chars(q, eol, cpu);
      if (ec != std::errc()) return false;
      if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) {
        std::array<uint64_t, 8> f{};
        q = after;
        size_t k = 0;
        for (; k < f.size(); ++k) {
          while (q < eol && *q == ' ') ++q;
          auto [next, ec2] = std::from_chars(q, eol, f[k]);
          if (ec2 != std::errc()) break;
          q = next;
        }
        if (k < 4) return false;  // user nice system idle at least (older kernels stop there)
        // Busy: user, nice, system, irq, softirq and steal (a hypervisor running another guest
        // on this CPU holds it as surely as a process does); idle and iowait are free.
        const uint64_t busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
        out.busy += busy;
        out.nice += f[1];
        out.total += busy + f[3] + f[4];
        ++found;
      }
    } else if (found > 0 && !(eol - p >= 3 && p[0] == 'c' && p[1] == 'p' && p[2] == 'u')) {
      break;  // past the cpu lines
    }
    p = eol + 1;
  }
  return found == cpus.size();
}

uint64_t contending_ticks(const CpuTicks& ticks, int own_nice) {
  return own_nice > 0 ? ticks.busy : ticks.busy - std::min(ticks.nice, ticks.busy);
}

int cores_taken_by_others() { return sampler().taken(); }

uint64_t smaller_team_runs() { return sampler().smaller_runs.load(std::memory_order_relaxed); }

void count_smaller_team_run() { sampler().smaller_runs.fetch_add(1, std::memory_order_relaxed); }

void override_cores_taken(int cores) { sampler().override_taken(cores); }

int leased_threads() { return sampler().leased.load(std::memory_order_relaxed); }

void CoreLease::acquire(int threads, bool shrink) {
  release();
  Sampler& s = sampler();
  int t = std::max(1, threads);
  if (shrink && t > 1) {
    const int fits = std::max(1, s.usable() - s.leased.load(std::memory_order_relaxed));
    while (t > fits) t = std::max(1, t / 2);
  }
  threads_ = t;
  s.leased.fetch_add(t, std::memory_order_relaxed);
}

void CoreLease::release() {
  if (threads_ > 0) sampler().leased.fetch_sub(threads_, std::memory_order_relaxed);
  threads_ = 0;
}

}  // namespace recur::onednn
