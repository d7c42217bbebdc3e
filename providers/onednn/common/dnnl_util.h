// What every oneDNN kernel shares: the engine, per-thread streams, the thread count scope,
// user scratchpads from a pool, and the one place where dnnl::error becomes a Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "recur/tensor.h"
#include "runtime/core/memory_budget.h"
#include "runtime/core/status.h"
#include "runtime/provider/execution_provider.h"
#include "runtime/provider/tuning_cache.h"

namespace recur::onednn {

// The CPU engine, created once.
const dnnl::engine& cpu_engine();
// A stream for the calling thread: streams must not be shared between threads.
dnnl::stream& thread_stream();

// The threads the provider may use at most (ProviderConfig::threads, or the OpenMP default).
int max_threads_default();

// Sets the calling thread's OpenMP thread count for its lifetime. oneDNN sizes a primitive's
// scratchpad for the count at creation, so execution must run under the same count.
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_;
};

// Runs `f`, turning a dnnl::error (or std::bad_alloc) into a Status that names `what`. The one
// place where oneDNN's exceptions are caught.
Status dnnl_error_status(const dnnl::error& e, const std::string& what);
template <class F>
Status dnnl_try(const std::string& what, F&& f) {
  try {
    f();
    return ok_status();
  } catch (const dnnl::error& e) {
    return dnnl_error_status(e, what);
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kDevice, what + ": out of memory");
  }
}

// As above, naming `node` only on an error: run paths build no string.
template <class F>
Status dnnl_try(const Node& node, F&& f) {
  try {
    f();
    return ok_status();
  } catch (const dnnl::error& e) {
    return dnnl_error_status(e, node.describe());
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kDevice, node.describe() + ": out of memory");
  }
}

// 64-byte aligned host memory.
struct AlignedBuffer {
  // `huge_pages`: from 2 MiB, ask for transparent huge pages for the buffer's whole 2 MiB pages
  // (for buffers filled whole).
  explicit AlignedBuffer(size_t bytes, bool huge_pages = true);
  ~AlignedBuffer();
  // For a buffer made with huge pages (`huge`): off, its pages fault in at 4 KiB until turned
  // on again, which then collapses those already resident into huge pages at once
  // (MADV_COLLAPSE; where the kernel lacks it, khugepaged does so in time). For a buffer
  // written in an order that would touch every huge page at its first few writes.
  void hold_huge_pages(bool on);
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  void* data = nullptr;
  size_t bytes = 0;
  bool huge = false;  // asked for transparent huge pages
};
// The bytes of all AlignedBuffers alive in the process (the provider's packed weights and
// scratchpads): how tests see which copies of a node's weights a session holds.
size_t aligned_bytes_in_use();

// Scratchpads and temporary buffers for concurrent runs: each lease takes a buffer of its own
// and gives it back, so that large scratchpads are not allocated (and page-faulted) on every
// run. Every pool in the process draws on one set of free buffers while any pool exists (it
// goes with the last kernel): the kernels of a run lease one after another, so the buffers a
// process holds are about the largest scratchpads that are leased at once, not one per kernel.
// A pool per kernel held each node's own: an OCR model's convolutions held 104 MiB of heap and
// 46 MiB mapped after a stream of line widths, 57 and 62 shared (resident 173 -> 149 MiB).
class ScratchPool {
  struct Shared;

 public:
  ScratchPool();

  class Lease {
   public:
    Lease() = default;
    Lease(Shared* pool, std::unique_ptr<AlignedBuffer> buf, std::shared_ptr<MemoryBudget> budget,
          size_t charged)
        : pool_(pool), buf_(std::move(buf)), budget_(std::move(budget)), charged_(charged) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    void* data() const { return buf_ ? buf_->data : nullptr; }

   private:
    Shared* pool_ = nullptr;  // outlives the lease: the leasing kernel's pool holds it
    std::unique_ptr<AlignedBuffer> buf_;
    std::shared_ptr<MemoryBudget> budget_;  // the run's, which the lease counts against
    size_t charged_ = 0;
  };

  // A buffer of at least `bytes` (nullptr data for 0 bytes). It counts against the calling
  // thread's run memory budget while leased; throws recur::Error (kOutOfRange) past it.
  // `dense`: for a caller that writes most of it, which gets one on transparent huge pages
  // (AlignedBuffer); others get 4 KiB pages, of which only those touched become resident.
  Lease acquire(size_t bytes, bool dense = false);

 private:
  std::shared_ptr<Shared> shared_;
};

// A oneDNN memory object over `data` (no copy).
inline dnnl::memory make_memory(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, cpu_engine(), const_cast<void*>(data));
}

// The arguments of one primitive's executions: dnnl::memory objects made on the first run and
// re-pointed on later ones. Making them on every run (an allocation inside oneDNN each, plus
// the map's) took about a third of the oneDNN RNN kernel's time on small models (perf,
// models/packed_bilstm_tagger). One pool per primitive; concurrent runs each lease a set.
// The primitive runs through the C API with a flat argument array kept in the set: the C++
// API's execute copies its std::unordered_map into a fresh std::vector on every call.
class ArgsPool {
 public:
  struct Args {
    std::vector<std::pair<int, dnnl::memory>> memories;
    std::vector<dnnl_exec_arg_t> flat;  // memories' handles, in the same order
  };
  class Lease {
   public:
    Lease(ArgsPool* pool, std::unique_ptr<Args> args) : pool_(pool), args_(std::move(args)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = default;
    ~Lease();
    // Points argument `arg` at `data`. `md` must be the same on every run of the primitive.
    // An unchanged pointer costs nothing; a changed one over a padded layout gets a new memory
    // object, since set_data_handle would zero the padding of (possibly shared) data.
    void bind(int arg, const dnnl::memory::desc& md, const void* data);
    // Executes `p` on `stream` with every argument bound so far; throws dnnl::error.
    void execute(const dnnl::primitive& p, dnnl::stream& stream) const;

   private:
    ArgsPool* pool_ = nullptr;
    std::unique_ptr<Args> args_;
  };

  Lease acquire();

 private:
  void give_back(std::unique_ptr<Args> args);
  std::mutex mu_;
  std::vector<std::unique_ptr<Args>> free_;
};

// Objects that concurrent runs of a kernel lease, each run one of its own, and give back: what
// they hold (vectors, their capacity) survives from run to run, so that a kernel's per-run
// buffers are allocated once per concurrent run rather than on every run.
template <class T>
class ObjectPool {
 public:
  class Lease {
   public:
    Lease(ObjectPool* pool, std::unique_ptr<T> obj) : pool_(pool), obj_(std::move(obj)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = default;
    ~Lease() {
      if (pool_ && obj_) pool_->give_back(std::move(obj_));
    }
    T& operator*() const { return *obj_; }
    T* operator->() const { return obj_.get(); }

   private:
    ObjectPool* pool_ = nullptr;
    std::unique_ptr<T> obj_;
  };

  Lease acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        auto obj = std::move(free_.back());
        free_.pop_back();
        return Lease(this, std::move(obj));
      }
    }
    return Lease(this, std::make_unique<T>());
  }

 private:
  void give_back(std::unique_ptr<T> obj) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(obj));
  }
  std::mutex mu_;
  std::vector<std::unique_ptr<T>> free_;
};

// The threads a kernel's primitives run on: a team of `max`, or with `shrink` a smaller one
// while other processes hold some of the cores (busy_cores.h). Deterministic sessions and
// onednn.busy_cores=wait keep the team whole: its size can change the last bits of a sum.
struct Threads {
  int max = 1;
  bool shrink = false;
};

// The provider's settings, as the kernels see them.
enum class ImplChoice { kAuto, kAny, kLdigo };
enum class ThreadingChoice { kAuto, kSingle, kOmp, kSplit };
struct OnednnOptions : ProviderOptions {
  int max_threads = 1;
  ImplChoice impl = ImplChoice::kAuto;  // onednn.impl: auto | primitive | any | ldigo
  // recur's own AVX-512 loops for small cells and ops (rnn/small_cell.h, common/avx512.h):
  // onednn.impl auto only; `primitive` is auto among oneDNN's primitives.
  bool small_cells = true;
  ThreadingChoice threading = ThreadingChoice::kAuto;  // onednn.threading: auto | single |
                                                       // omp | split
  // onednn.tune: 0 takes the cache's entry or else the rule, never timing; 1 times a bucket
  // the cache lacks when the session is created; lazy times it at its first run instead.
  enum class Tune { kOff, kAtLoad, kLazy };
  Tune tune = Tune::kOff;
  bool verbose = false;  // onednn.verbose: print each choice to stderr
  // onednn.prepare=load: build the RNN primitives of a static shape (JIT code, weights in the
  // primitive's layout) at load, so that the first run pays nothing; the default, `run`,
  // builds them at the first run, which keeps that memory and time out of session creation.
  bool prepare_at_load = false;
  // onednn.time_block: time steps per RNN primitive call, so that the primitive's scratchpad
  // (which holds every step's gates) is sized for a block rather than the sequence; 0 picks by
  // the rule in rnn_run.cc (time_block), and a value of T or more runs whole sequences.
  int64_t time_block = 0;
  // onednn.busy_cores: shrink (the default) runs smaller OpenMP teams while other processes
  // hold cores; wait keeps them whole (as do deterministic sessions).
  bool shrink_teams = true;
  Threads team() const { return {max_threads, shrink_teams && !deterministic}; }
  // onednn.precision: fp32 | bf16 | int8, else SessionOptions::cpu_precision.
  ProviderConfig::Precision precision = ProviderConfig::Precision::kFp32;
  // onednn.winograd: auto (the default) runs 3x3 convolutions of 32 or more channels in and
  // out by Winograd's algorithm where oneDNN has it and X is tame (conv.cc); off keeps them
  // direct.
  bool winograd = true;
  // onednn.blocked: auto (the default) has the session keep the tensors between this provider's
  // convolutions and pools channel-blocked (runtime/graph/blocked.h) where AVX-512 makes
  // nChw16c its convolutions' layout, or channels-last where the chain's convolutions run
  // faster so (chain_runs_channels_last, nn/conv.cc); nchw16c makes every chain blocked, nhwc
  // every chain without a pool channels-last (the rest blocked);
  // off leaves every convolution copying to and from its layout.
  enum class Chains { kAuto, kOff, kBlocks, kChannelsLast };
  Chains blocked = Chains::kAuto;
  // Shared by the session's kernels; null when the session has no cache.
  std::shared_ptr<TuningCache> cache;
};
// What every tuning cache entry of this process depends on: CPU model, ISA, oneDNN and recur
// versions (docs/tuning-cache.md).
std::string tuning_env();
// A core's L2 cache in bytes (sysconf), 0 where the system does not say.
int64_t core_l2_bytes();
// Whether a core's L2 of `l2_bytes` takes the rules measured on the Zen 5 (1 MiB) rather than
// the Xeon's (2 MiB, and an L2 the system does not give): which rows take recur's RNN kernels
// rather than oneDNN's primitive (row_team.h, small_cell.h).
inline bool small_l2(int64_t l2_bytes) { return l2_bytes > 0 && l2_bytes < (int64_t{2} << 20); }
// The options of the provider compiling `ctx`'s node.
const OnednnOptions& options_of(const CompileContext& ctx);

}  // namespace recur::onednn
