// Whether other processes keep some of this process's cores busy, so that an OpenMP team as
// large as the cores would wait for threads that cannot run.
//
// libgomp's teams split a primitive's work evenly and meet at a barrier: a member whose core
// another process holds finishes a scheduler time slice late, and every large oneDNN primitive
// of a run waits for it (a 12-layer encoder went from 25 ms at one thread to 150 ms at two
// beside a busy loop, where ONNX Runtime's pool lets the calling thread take the work over).
// The cure is a smaller team while the cores are taken; the count of taken cores comes from
// the kernel's per-CPU accounting (/proc/stat) minus this process's own CPU time, sampled at
// most every kWindowMs on the run path (one read of /proc/stat, no allocation).
#pragma once

#include <cstdint>
#include <span>

namespace recur::onednn {

// Cores of this process's CPU affinity that other processes kept busy in the last window, in
// whole cores (0 while the machine is quiet, or where /proc/stat cannot be read).
int cores_taken_by_others();

// The cores one oneDNN execution of this process holds while it runs (a primitive, an RNN
// pass), so that concurrent runs share the cores rather than each take a team as large as
// the machine: two runs of teams of 2 on 2 cores would wait for each other at every barrier
// as they would for another process. A team takes the largest of its size, half, quarter, ...
// down to 1 that fits in the cores this process may use less those other processes and this
// process's other executions hold (halving keeps the variants a primitive may need to a few);
// a lease without `shrink` takes the whole team whatever the load, and counts it.
class CoreLease {
 public:
  CoreLease() = default;
  CoreLease(int threads, bool shrink) { acquire(threads, shrink); }
  ~CoreLease() { release(); }
  CoreLease(const CoreLease&) = delete;
  CoreLease& operator=(const CoreLease&) = delete;

  void acquire(int threads, bool shrink);
  void release();
  int threads() const { return threads_; }

 private:
  int threads_ = 0;
};

// Threads this process's running executions hold now (CoreLease).
int leased_threads();

// Runs of a primitive or of an RNN pass on a smaller team or split than the one chosen for it,
// in this process so far.
uint64_t smaller_team_runs();
void count_smaller_team_run();

// For tests: `cores` count as taken by other processes, whatever /proc/stat says; -1 goes back
// to /proc/stat.
void override_cores_taken(int cores);

// The decision itself, for tests: the cores counted as taken after a window in which other
// processes used `others` cores on average, given the count `before` it. A core counts as
// taken from 0.4 of one busy (two threads sharing a core each get about half), and stops
// counting only below 0.25, so that a count on the edge does not flip at every window.
int taken_after_window(double others, int before);

// Per-CPU busy and total ticks of the CPUs in `cpus` (indices) summed, from the text of
// /proc/stat, and of busy the ticks of processes of lowered priority (`nice`, above 0); false
// where a CPU's line is missing or malformed.
struct CpuTicks {
  uint64_t busy = 0;
  uint64_t total = 0;
  uint64_t nice = 0;
};
bool parse_proc_stat(std::span<const char> text, std::span<const int> cpus, CpuTicks& out);

// The ticks of a window's `busy` that other processes' work may have taken from this process:
// all of them, but for those of lowered priority while this process's is not lowered
// (`own_nice` <= 0). The scheduler gives a thread of nice 0 about nine times the time of one of
// nice 10 on a shared core, so such a process holds a core only while the team leaves it idle:
// beside a fuzzer at nice 10 an LSTM of 512 units over 8 rows took 28.3-28.8 ms on a team of two
// shrunk to one for it, 15.5-16.1 on the whole team (ONNX Runtime's two threads 17.3-19.6).
uint64_t contending_ticks(const CpuTicks& ticks, int own_nice);

}  // namespace recur::onednn
