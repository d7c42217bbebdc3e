// The host memory one run may hold (SessionOptions::memory_limit), counted where host tensors
// are allocated (Tensor::empty) while a MemoryBudgetScope is active on the allocating thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/core/status.h"

namespace recur {

// Bytes live in one run. Shared: a tensor that outlives the run (an output) keeps its budget
// alive until it is freed. The counter is atomic because the last owner of a tensor may free it
// on another thread; there is no lock.
class MemoryBudget : public std::enable_shared_from_this<MemoryBudget> {
 public:
  explicit MemoryBudget(size_t limit) : limit_(limit) {}

  // Counts `bytes` against the limit, or returns false (counting nothing) when they would take
  // the live total past it.
  bool try_charge(size_t bytes);
  // The kOutOfRange error for a failed try_charge(bytes); `what` names the allocation.
  Status exceeded(size_t bytes, const std::string& what) const;
  void release(size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

  size_t limit() const { return limit_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  size_t limit_;
  std::atomic<size_t> used_{0};
  std::atomic<size_t> peak_{0};
};

// The budget host allocations on this thread count against, or null.
MemoryBudget* current_memory_budget();

// Makes `budget` the calling thread's for its lifetime (nests: the previous one comes back).
class MemoryBudgetScope {
 public:
  explicit MemoryBudgetScope(MemoryBudget* budget);
  ~MemoryBudgetScope();
  MemoryBudgetScope(const MemoryBudgetScope&) = delete;
  MemoryBudgetScope& operator=(const MemoryBudgetScope&) = delete;

 private:
  MemoryBudget* previous_;
};

// Host bytes held against the current budget until release() or destruction; for memory a
// kernel commits to before allocating it (the stacked outputs of Loop and Scan). A no-op
// without a budget.
class MemoryReservation {
 public:
  MemoryReservation() : budget_(current_memory_budget()) {}
  ~MemoryReservation() { release(); }
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;

  Status grow(size_t bytes, std::string_view what);
  void release();
  size_t bytes() const { return bytes_; }

 private:
  MemoryBudget* budget_;
  size_t bytes_ = 0;
};

// The memory available for new allocations on this machine: MemAvailable from /proc/meminfo,
// else the free physical pages; SIZE_MAX when neither can be read.
size_t available_host_memory();

}  // namespace recur
