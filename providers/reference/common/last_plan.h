// The plan a kernel made on its last run, kept for the next run with the same key.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "runtime/core/status.h"

namespace recur::reference {

// A plan that holds per-position tables (Pad's index maps, a pooling window's taps) would
// otherwise be allocated on every run; a streaming model runs the same shapes every call.
// Concurrent runs share the kernel, hence the mutex; a plan in use stays alive through its
// shared_ptr while another run replaces it.
template <class Key, class Plan>
class LastPlan {
 public:
  // The plan for `key`: the kept one if the key matches, else make() (a Result<Plan>), kept.
  template <class Make>
  Result<std::shared_ptr<const Plan>> get(const Key& key, Make&& make) const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (plan_ && key_ == key) return plan_;
    }
    auto made = make();
    if (!made.ok()) return made.status();
    auto plan = std::make_shared<const Plan>(std::move(made).value());
    std::lock_guard<std::mutex> lock(mu_);
    plan_ = plan;
    key_ = key;
    return plan;
  }

 private:
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Plan> plan_;
  mutable Key key_{};
};

}  // namespace recur::reference
