#include "providers/onednn/common/job_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <omp.h>
#include <sched.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

// RECUR_JOB_POOL_OWN_THREADS: the regions on threads of recur's own (Team below), on in a
// ThreadSanitizer build; recur_job_pool_team_tests (tests/CMakeLists.txt) sets it too, so that
// every build's CTest runs the job pool's tests on that path.
#if !defined(RECUR_JOB_POOL_OWN_THREADS)
#if defined(__SANITIZE_THREAD__)
#define RECUR_JOB_POOL_OWN_THREADS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RECUR_JOB_POOL_OWN_THREADS 1
#endif
#endif
#endif

namespace recur::onednn {

namespace {

// The floating-point control word (flush-to-zero, denormals-are-zero, rounding) is per
// thread. A job computes the same bits on a helper as on the caller only if it runs under the
// caller's, so a helper adopts it for the job and then restores its own.
struct FpEnv {
#if defined(__SSE__)
  unsigned csr = _mm_getcsr();
#endif
};
class FpEnvScope {
 public:
  explicit FpEnvScope(const FpEnv& want) {
#if defined(__SSE__)
    saved_ = _mm_getcsr();
    if (saved_ != want.csr) _mm_setcsr(want.csr);
#endif
  }
  ~FpEnvScope() {
#if defined(__SSE__)
    if (_mm_getcsr() != saved_) _mm_setcsr(saved_);
#endif
  }
  FpEnvScope(const FpEnvScope&) = delete;
  FpEnvScope& operator=(const FpEnvScope&) = delete;

 private:
  unsigned saved_ = 0;
};

struct Task {
  const std::function<void(size_t)>* f = nullptr;
  size_t n = 0;
  int helpers = 0;              // helpers that may join
  std::atomic<size_t> next{0};  // the next job to hand out
  std::atomic<size_t> done{0};
  std::atomic<int> joined{0};
  FpEnv env;  // the caller's
  std::mutex mu;
  std::condition_variable finished;
};

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void run(size_t n, int helpers, const std::function<void(size_t)>& f) {
    std::shared_ptr<Task> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      task = spare_task();
      task->f = &f;
      task->n = n;
      task->helpers = helpers;
      while (static_cast<int>(threads_.size()) < helpers) {
        threads_.emplace_back([this] { work(); });
      }
      tasks_.push_back(task);
    }
    wake_.notify_all();
    work_on(*task);  // the caller takes jobs like any helper
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.erase(std::find(tasks_.begin(), tasks_.end(), task));
    }
    // Every job is handed out; wait for the ones helpers are still running.
    {
      std::unique_lock<std::mutex> lock(task->mu);
      task->finished.wait(lock, [&] { return task->done.load() == task->n; });
    }
    std::lock_guard<std::mutex> lock(mu_);
    spare_.push_back(std::move(task));
  }

 private:
  // A finished task no helper holds any more, reset, else a new one (mu_ held): a call then
  // allocates nothing once as many tasks as the most concurrent calls have been made.
  std::shared_ptr<Task> spare_task() {
    for (size_t i = 0; i < spare_.size(); ++i) {
      if (spare_[i].use_count() != 1) continue;  // a helper is still leaving it
      std::shared_ptr<Task> t = std::move(spare_[i]);
      spare_[i] = std::move(spare_.back());
      spare_.pop_back();
      t->next = 0;
      t->done = 0;
      t->joined = 0;
      t->env = FpEnv{};
      return t;
    }
    return std::make_shared<Task>();
  }

  static void work_on(Task& t) {
    for (;;) {
      const size_t i = t.next.fetch_add(1);
      if (i >= t.n) return;
      (*t.f)(i);
      if (t.done.fetch_add(1) + 1 == t.n) {
        std::lock_guard<std::mutex> lock(t.mu);
        t.finished.notify_all();
      }
    }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      std::shared_ptr<Task> task;
      wake_.wait(lock, [&] {
        if (stop_) return true;
        for (auto& t : tasks_) {
          if (t->next.load() < t->n && t->joined.load() < t->helpers) {
            task = t;
            return true;
          }
        }
        return false;
      });
      if (stop_) return;
      task->joined.fetch_add(1);
      lock.unlock();
      {
        FpEnvScope env(task->env);
        work_on(*task);
      }
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<Task>> tasks_;
  std::vector<std::shared_ptr<Task>> spare_;  // finished, for reuse
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

#if RECUR_JOB_POOL_OWN_THREADS
// With RECUR_JOB_POOL_OWN_THREADS (a ThreadSanitizer build) the regions below run on threads of
// recur's own rather than on the calling thread's OpenMP team. libgomp is not instrumented, so
// ThreadSanitizer cannot see the order its fork and join give a region: every value the caller
// wrote before a region and a thread of its team read in it was a data race to it (tools/tsan.sh
// stopped at the first region), the block of shared values the compiler fills at the pragma
// included, which no annotation in the source can come after. Each calling thread has helpers that
// live as long as it does, helper k taking part k of every region, as thread k of an OpenMP team
// does.
thread_local bool t_in_region = false;

class Team {
 public:
  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  ~Team() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // body(k, size) for k in [0, size), k = 0 on the calling thread.
  void run(int helpers, const std::function<void(size_t, size_t)>& body) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      while (static_cast<int>(threads_.size()) < helpers) {
        const size_t k = threads_.size() + 1;
        threads_.emplace_back([this, k] { work(k); });
      }
      body_ = &body;
      size_ = static_cast<size_t>(helpers) + 1;
      pending_ = helpers;
      ++gen_;
    }
    wake_.notify_all();
    t_in_region = true;
    body(0, size_);
    t_in_region = false;
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void work(size_t k) {
    t_in_region = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || gen_ != seen; });
      if (stop_) return;
      seen = gen_;
      if (k >= size_) continue;
      const auto* body = body_;
      const size_t size = size_;
      lock.unlock();
      (*body)(k, size);
      lock.lock();
      if (--pending_ == 0) done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t, size_t)>* body_ = nullptr;
  size_t size_ = 0;
  int pending_ = 0;
  uint64_t gen_ = 0;
  bool stop_ = false;
};
#endif

bool in_parallel() {
#if RECUR_JOB_POOL_OWN_THREADS
  return t_in_region;
#else
  return omp_in_parallel() != 0;
#endif
}

// Runs body(k, size) on the calling thread (k = 0) and up to `helpers` threads of its team, each
// thread under the caller's floating-point environment; a helper that finds itself on the
// caller's core moves off it (see run_jobs).
template <class Body>
void region(int helpers, const Body& body) {
  const FpEnv env;
  const int caller_cpu = sched_getcpu();
  auto part = [&](size_t own, size_t team) {
    FpEnvScope scope(env);
    if (own != 0 && caller_cpu >= 0 && sched_getcpu() == caller_cpu) move_off(caller_cpu);
    body(own, team);
  };
#if RECUR_JOB_POOL_OWN_THREADS
  static thread_local Team team;
  team.run(helpers, part);
#else
#pragma omp parallel num_threads(helpers + 1)
  part(static_cast<size_t>(omp_get_thread_num()), static_cast<size_t>(omp_get_num_threads()));
#endif
}

// The threads of one parallel region meet here: the last to arrive starts the next generation.
// A waiter spins, then yields its core, for a thread of the team that another process holds off
// its core (the row team's stall guard then runs its next block on one thread).
class SpinBarrier {
 public:
  // The team's size, known inside the region: each thread stores it before its first wait.
  void set_threads(int threads) { threads_.store(threads, std::memory_order_relaxed); }
  void wait() {
    const unsigned gen = gen_.load(std::memory_order_acquire);
    const int last = threads_.load(std::memory_order_relaxed) - 1;
    if (count_.fetch_add(1, std::memory_order_acq_rel) == last) {
      count_.store(0, std::memory_order_relaxed);
      gen_.store(gen + 1, std::memory_order_release);
      return;
    }
    for (int spins = 0; gen_.load(std::memory_order_acquire) == gen; ++spins) {
      if (spins < kSpins) {
#if defined(__SSE__)
        _mm_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  // About 50 us of pauses on the Zen 4 (25 ns each), longer than most steps' waits, short
  // enough that a partner thread sharing the core (more threads than cores free) soon gets it.
  static constexpr int kSpins = 1 << 11;
  std::atomic<int> threads_{1};
  // Apart, so that arrivals at the count do not take the line the waiters spin on.
  alignas(64) std::atomic<int> count_{0};
  alignas(64) std::atomic<unsigned> gen_{0};
};

}  // namespace

void move_off(int cpu) {
  cpu_set_t mask;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof mask, &mask) != 0) return;
  if (!CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2) return;
  cpu_set_t others = mask;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof others, &others) == 0) sched_setaffinity(0, sizeof mask, &mask);
}

void run_rounds(int64_t rounds, size_t n, int helpers,
                const std::function<void(int64_t, size_t)>& f) {
  if (rounds <= 0 || n == 0) return;
  if (helpers <= 0 || n == 1 || in_parallel()) {
    for (int64_t r = 0; r < rounds; ++r) {
      auto round = [&f, r](size_t i) { f(r, i); };
      run_jobs(n, helpers, [&round](size_t i) { round(i); });
    }
    return;
  }
  helpers = std::min<int>(helpers, static_cast<int>(n) - 1);
  SpinBarrier barrier;
  region(helpers, [&](size_t own, size_t team) {
    // Every thread stores the same size before its first wait, so none waits on another's.
    barrier.set_threads(static_cast<int>(team));
    for (int64_t r = 0; r < rounds; ++r) {
      for (size_t i = own; i < n; i += team) f(r, i);
      if (r + 1 < rounds) barrier.wait();
    }
  });
}

void run_jobs(size_t n, int helpers, const std::function<void(size_t)>& f) {
  if (n == 0) return;
  if (helpers <= 0 || n == 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  helpers = std::min<int>(helpers, static_cast<int>(n) - 1);
  if (in_parallel()) {
    pool().run(n, helpers, f);
    return;
  }
  // On the calling thread's OpenMP team, the one its oneDNN primitives run on. After a
  // parallel region libgomp's threads spin on their cores for several milliseconds (300,000
  // turns by default) before they sleep, so a helper of the pool above woken then shared its
  // core with a spinning OpenMP thread and ran at half speed: a bidirectional LSTM whose
  // directions run in parallel after an LSTM on an OpenMP team took 7.7 ms instead of 4.8.
  // The team's threads instead take the jobs as they spin.
  //
  // Thread k of the team takes job k first, and the jobs past the team's size are handed out as
  // threads come free: a caller that runs the same jobs again and again (the row team's slices
  // of R, a step each) finds each job's data in the cache of the core that ran it last. Handed
  // out first come first served, the jobs moved between threads whenever the caller took the
  // second before its helper arrived, and a slice then came to a core whose cache held the
  // other one (an LSTM of 512 units, 1 row, 2 threads: 54 us a step before, 43 after).
  //
  // A helper that finds itself on the caller's core moves to another one (move_off): a thread
  // the team has just created is placed on its creator's core, and the scheduler of a virtual
  // machine left it there for tens of milliseconds while the other core idled, each of the two
  // spinning through the other's time slice, 4 ms, in every region (in libgomp's barriers and
  // while it waits for the next region). A keyword spotter's two GRUs at batch 8 took 8 ms
  // each at a first run where they take 0.1.
  std::atomic<size_t> next{0};
  region(helpers, [&](size_t own, size_t team) {
    if (own < n) f(own);
    for (size_t i = team + next.fetch_add(1); i < n; i = team + next.fetch_add(1)) f(i);
  });
}

}  // namespace recur::onednn
