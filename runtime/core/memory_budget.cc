#include "runtime/core/memory_budget.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>

namespace recur {

namespace {

thread_local MemoryBudget* t_budget = nullptr;

std::string mib(size_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

}  // namespace

bool MemoryBudget::try_charge(size_t bytes) {
  const size_t before = used_.fetch_add(bytes, std::memory_order_relaxed);
  const size_t after = before + bytes;
  if (after < before || after > limit_) {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
    return false;
  }
  size_t peak = peak_.load(std::memory_order_relaxed);
  while (after > peak && !peak_.compare_exchange_weak(peak, after, std::memory_order_relaxed)) {
  }
  return true;
}

Status MemoryBudget::exceeded(size_t bytes, const std::string& what) const {
  const size_t now = used();
  const size_t after = now + bytes < now ? SIZE_MAX : now + bytes;
  return out_of_range("the run's host memory limit of " + std::to_string(limit_) + " bytes (" +
                      mib(limit_) + ") is exceeded: " + what + " (" + std::to_string(bytes) +
                      " bytes) would bring the run's live host memory to " + mib(after) +
                      "; raise it with SessionOptions::memory_limit");
}

MemoryBudget* current_memory_budget() { return t_budget; }

MemoryBudgetScope::MemoryBudgetScope(MemoryBudget* budget) : previous_(t_budget) {
  t_budget = budget;
}

MemoryBudgetScope::~MemoryBudgetScope() { t_budget = previous_; }

Status MemoryReservation::grow(size_t bytes, std::string_view what) {
  if (!budget_) return ok_status();
  if (!budget_->try_charge(bytes)) return budget_->exceeded(bytes, std::string(what));
  bytes_ += bytes;
  return ok_status();
}

void MemoryReservation::release() {
  if (budget_ && bytes_) budget_->release(bytes_);
  bytes_ = 0;
}

size_t available_host_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return static_cast<size_t>(kb) * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<size_t>(pages) * static_cast<size_t>(page);
  return SIZE_MAX;
}

}  // namespace recur
