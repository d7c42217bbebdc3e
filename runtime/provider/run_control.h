// What ends a run early (RunOptions::terminate and deadline), as kernels and the executor see
// it. Checked between nodes, per Loop/Scan iteration and per block of RNN time steps.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>

#include "runtime/core/status.h"
#include "runtime/provider/run_random.h"

namespace recur {

struct RunControl {
  const std::atomic<bool>* terminate = nullptr;  // RunOptions::terminate() sets it
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // The caller may terminate: long fused RNN calls are split into blocks of time steps.
  bool fine_grained = false;
  // The run's random state, for the random operators; not part of active().
  const RunRandom* random = nullptr;

  bool active() const { return terminate || deadline; }
  // kCancelled, saying whether the flag or the deadline ended the run; ok otherwise. Cheap: a
  // relaxed load, and a clock read only when there is a deadline. Callers add where.
  Status check() const {
    if (terminate && terminate->load(std::memory_order_relaxed)) {
      return {ErrorCode::kCancelled, "the run was cancelled by RunOptions::terminate()"};
    }
    if (deadline && std::chrono::steady_clock::now() >= *deadline) {
      return {ErrorCode::kCancelled, "the run passed its deadline (RunOptions::deadline/timeout)"};
    }
    return ok_status();
  }
};

}  // namespace recur
