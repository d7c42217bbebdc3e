// Per-node timing for SessionOptions::profile. A run takes a ProfileBuffer for its length
// (ProfileRun); the executor finds it through a thread-local pointer, so the runners need no
// change, and a session that does not profile pays one branch per step. Records hold indices
// and plan pointers, not strings: names are looked up when the events are read or written.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "recur/profile.h"
#include "runtime/engine/session/plan.h"

namespace recur {

using ProfileClock = std::chrono::steady_clock;

struct ProfileRecord {
  enum class Kind : uint8_t { kStep, kRun };
  Kind kind = Kind::kStep;
  bool failed = false;
  int32_t parent = -1;     // index of the enclosing step's record in the same buffer
  int32_t iteration = -1;  // which run of the parent's subgraphs this step belongs to
  int32_t sub_runs = 0;    // subgraph runs this step started (If, Loop, Scan)
  int32_t step = -1;
  int32_t tid = 0;
  const SubgraphPlan* plan = nullptr;
  int64_t run = -1;
  uint32_t shapes_begin = 0;  // into ProfileBuffer::ranks_
  uint32_t shapes_count = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
};

class ProfileBuffer {
 public:
  explicit ProfileBuffer(ProfileClock::time_point origin) : origin_(origin) {
    records_.reserve(4096);
    ranks_.reserve(8192);
    dims_.reserve(16384);
  }

  // The buffer of the run on this thread, or nullptr when it is not profiled.
  static ProfileBuffer* current();

  int32_t begin_step(const SubgraphPlan& plan, size_t step, std::span<const Tensor> frame);
  void end_step(int32_t record, bool ok);
  // Around a subgraph run: which run of the enclosing step's subgraphs this is.
  int32_t enter_subgraph();
  void leave_subgraph(int32_t saved) { iteration_ = saved; }

 private:
  friend class Profiler;
  friend class ProfileRun;
  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(ProfileClock::now() - origin_)
        .count();
  }

  ProfileClock::time_point origin_;
  std::mutex mu_;  // held by the run that uses the buffer, and by readers
  std::vector<ProfileRecord> records_;
  std::vector<int32_t> ranks_;  // per input: rank, or -1 for none
  std::vector<int64_t> dims_;
  int32_t current_ = -1;
  int32_t iteration_ = -1;
  int32_t tid_ = 0;
  int64_t run_ = -1;
};

class Profiler {
 public:
  Profiler(std::string path, ProfileClock::time_point origin)
      : path_(std::move(path)), origin_(origin) {}
  ~Profiler();  // writes the file if anything was recorded since the last write

  ProfileClock::time_point origin() const { return origin_; }
  // A load phase from `begin` to now.
  void phase(const char* name, ProfileClock::time_point begin);
  // What the trace's metadata says about the session.
  void set_model(std::string model, std::vector<std::string> providers);

  std::vector<ProfileEvent> events() const;
  // Writes the trace to the path (a temporary file renamed); "" when there is no path.
  Result<std::string> write() const;

 private:
  friend class ProfileRun;
  ProfileBuffer* acquire(int64_t* run);
  void release(ProfileBuffer* b);
  int32_t tid_of(std::thread::id id);  // under mu_

  std::string path_;
  ProfileClock::time_point origin_;
  std::atomic<int64_t> runs_{0};
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<ProfileBuffer>> buffers_;
  std::vector<ProfileBuffer*> free_;
  std::vector<std::thread::id> threads_;  // tid i+1
  std::vector<std::pair<const char*, std::pair<int64_t, int64_t>>> phases_;
  std::string model_;
  std::vector<std::string> providers_;
  mutable std::atomic<bool> dirty_{false};
};

// One profiled run: takes a buffer, records the "run" event, and makes the buffer this
// thread's current one until it ends (also when the run fails or throws).
class ProfileRun {
 public:
  explicit ProfileRun(Profiler* p);
  ~ProfileRun();
  ProfileRun(const ProfileRun&) = delete;
  ProfileRun& operator=(const ProfileRun&) = delete;

 private:
  Profiler* profiler_;
  ProfileBuffer* buffer_ = nullptr;
  ProfileBuffer* previous_ = nullptr;
  int32_t record_ = -1;
  int uncaught_ = 0;  // a run that fails throws: more uncaught exceptions at the end
};

}  // namespace recur
