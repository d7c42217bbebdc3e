// Independent jobs (batch slices, directions) on helper threads, with the caller taking part.
//
// The caller runs jobs too. The helpers are the calling thread's OpenMP team (the threads its
// oneDNN primitives run on, which spin for a while after each primitive and so take the jobs at
// once), thread k taking job k first and the rest one at a time, so that a job run again and
// again stays on one core; inside a parallel region, where a nested team would be one thread, a
// pool of recur's own threads, which take jobs one at a time and of which the caller only ever
// waits for jobs a helper has already started. The RNN, convolution and copy loops ask for threads
// from a CoreLease (busy_cores.h), which shrinks to one while other processes hold the cores, so a
// busy machine costs a run about what one thread would; an OpenMP team inside an RNN primitive
// instead stalls at every barrier (one to several per time step) until all its threads are
// scheduled. A ThreadSanitizer build runs the regions on threads of recur's own (job_pool.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace recur::onednn {

// Runs f(i) for every i in [0, n) on the calling thread and up to `helpers` pool threads, and
// returns when all have finished. Safe to call from several threads at once.
void run_jobs(size_t n, int helpers, const std::function<void(size_t)>& f);

// Runs f(r, i) for every round r in [0, rounds) and job i in [0, n), each round's jobs after
// every job of the round before has finished, on the calling thread and up to `helpers` threads
// of its OpenMP team in one parallel region: thread k takes jobs k, k + team, ... of every
// round, so that a job run round after round keeps its data in one core's cache, and the threads
// meet at a spin barrier between rounds. The row team's steps are rounds: on the 2-vCPU EPYC
// a region forked and joined a step (run_jobs) cost 1.3 us, a spin barrier 0.2. Inside a
// parallel region, run_jobs a round.
void run_rounds(int64_t rounds, size_t n, int helpers,
                const std::function<void(int64_t, size_t)>& f);

// Moves the calling thread off `cpu` and leaves it free to move again: its affinity narrowed
// to the other cores it may run on, which migrates it at once, then restored. Nothing where it
// may run on `cpu` alone or its affinity cannot be read. run_jobs' helpers call it when they
// find themselves on the caller's core.
void move_off(int cpu);

// Runs f(begin, end) over `jobs` equal parts of [0, n), one job each, on the job pool (the
// caller alone where jobs is 1).
template <class F>
void in_parts(int64_t n, int64_t jobs, F&& f) {
  auto part = [&](size_t j) {
    f(n * static_cast<int64_t>(j) / jobs, n * static_cast<int64_t>(j + 1) / jobs);
  };
  // run_jobs takes a std::function: a one-reference closure fits its inline storage, a
  // closure of several references would be allocated on every call.
  run_jobs(static_cast<size_t>(jobs), static_cast<int>(jobs) - 1, [&part](size_t j) { part(j); });
}

}  // namespace recur::onednn
