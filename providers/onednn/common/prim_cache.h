// Helpers for the kernels that wrap one oneDNN primitive per input shape (MatMul, Gemm, Conv,
// pooling, eltwise, softmax): a thread-safe cache of primitives, dense memory descriptors, and
// execution with a per-run scratchpad.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "providers/onednn/common/dnnl_util.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/kernel.h"

namespace recur::onednn {

struct CachedPrimitive;

// The same primitive made for a smaller OpenMP team, for the windows in which other processes
// hold some of the cores (busy_cores.h): a team as large as the cores would wait at every
// barrier for a member that cannot run.
struct SmallerTeam {
  int threads = 1;
  dnnl::primitive primitive;  // empty where it could not be made with the same layouts
  dnnl::memory::desc scratchpad;
  std::shared_ptr<ArgsPool> args = std::make_shared<ArgsPool>();
};

// The smaller teams of one primitive, each made on its first need (a few milliseconds, once).
class SmallerTeams {
 public:
  // The variant for a team of `threads` (fewer than the primitive's), or nullptr where none
  // can be made.
  const SmallerTeam* get(const CachedPrimitive& p, int threads);

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<SmallerTeam>> made_;
};

// A primitive with the scratchpad it asked for (scratchpad_mode::user).
struct CachedPrimitive {
  dnnl::primitive primitive;
  dnnl::memory::desc scratchpad;
  std::string impl;
  int threads = 1;             // created for, and run with, this many OpenMP threads
  bool shrink = false;         // or fewer, while other processes hold cores (Threads)
  bool dense_scratch = false;  // writes most of its scratchpad (ScratchPool::acquire's `dense`)
  // Its executions' memory objects, made once and re-pointed (dnnl_util.h).
  std::shared_ptr<ArgsPool> args = std::make_shared<ArgsPool>();
  std::shared_ptr<SmallerTeams> smaller = std::make_shared<SmallerTeams>();
};

// One argument of an execution: its descriptor is the same on every run of the primitive.
struct Bind {
  int arg;
  const dnnl::memory::desc& md;
  const void* data;
};

// Primitives by key; the least recently used goes when the cache is full (a model fed many
// sizes keeps the plans of those that come back). Concurrent runs share it under a mutex;
// primitives themselves are safe to execute concurrently.
template <class Key, class Value = CachedPrimitive>
class PrimCache {
 public:
  static constexpr size_t kCapacity = 64;

  template <class Make>
  Result<std::shared_ptr<const Value>> get(const Key& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      it->second.used = ++clock_;
      return it->second.value;
    }
    Result<Value> made = make();
    if (!made.ok()) return made.status();
    if (map_.size() >= kCapacity) {
      map_.erase(std::min_element(map_.begin(), map_.end(), [](const auto& a, const auto& b) {
        return a.second.used < b.second.used;
      }));
    }
    auto v = std::make_shared<const Value>(std::move(made).value());
    map_.emplace(key, Entry{v, ++clock_});
    return v;
  }

  // The value of `key` where it has been made, else null.
  std::shared_ptr<const Value> find(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    it->second.used = ++clock_;
    return it->second.value;
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
  }

 private:
  struct Entry {
    std::shared_ptr<const Value> value;
    uint64_t used = 0;  // clock_ at its last use
  };
  std::mutex mu_;
  uint64_t clock_ = 0;
  std::map<Key, Entry> map_;
};

// Runs on shared plans (a bucket's convolution, a product in chunks of rows, an RNN in shared
// blocks) in this process: their tests count them, so that a test whose shared plan did not
// run fails.
int64_t shared_plan_runs();
void count_shared_plan_run();

// Which shapes of a kernel get a primitive of their own. A model fed sequences of varying
// length runs a new shape every run, and oneDNN generates code for each primitive: a
// Conformer's hundred projections made a hundred primitives a run of a new length (35 ms a run
// against 24 at a length seen). So the first kExactShapes shapes, and any seen kPromoteRuns
// times, get their own; the others share a few: a product's rows run in two chunks of a few
// sizes (for_each_chunk, packed_b.h), a convolution on its shape bucket's primitive
// (shape_bucket.h). Deterministic sessions keep exact plans only (`shared` false): a shared
// primitive may sum in another order.
template <class Key>
class ExactPlans {
 public:
  explicit ExactPlans(bool shared) : shared_(shared) {}

  static constexpr size_t kExactShapes = 4;
  static constexpr int64_t kPromoteRuns = 16;
  static constexpr int64_t kMaxChunk = 512;

  // Whether `key` (a shape, with whatever else selects the primitive) runs on a plan of its
  // own; counts this run of it.
  bool exact(const Key& key) {
    if (!shared_) return true;
    std::lock_guard<std::mutex> lock(mu_);
    if (exact_.count(key)) return true;
    if (exact_.size() >= kExactShapes) {
      if (runs_.size() >= 1024 && !runs_.count(key)) runs_.clear();
      if (++runs_[key] < kPromoteRuns || exact_.size() >= PrimCache<Key, int>::kCapacity)
        return false;
      runs_.erase(key);
    }
    exact_.insert(key);
    return true;
  }

  // Chunk sizes: the powers of two and one and a half times them (1, 2, 3, 4, 6, 8, 12, ...), so
  // that the largest size below a count of rows covers at least two thirds of it.
  static int64_t chunk_below(int64_t m) {  // the largest size <= m (m >= 1)
    const auto p = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(m)));
    return p >= 2 && p / 2 * 3 <= m ? p / 2 * 3 : p;
  }
  static int64_t chunk_above(int64_t m) {  // the smallest size >= m (m >= 1)
    const int64_t below = chunk_below(m);
    if (below == m) return m;
    const auto p = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(m)));
    return below == p && p >= 2 ? p / 2 * 3 : 2 * p;
  }

  // f(first row, rows) over M rows in chunks of the sizes above, up to kMaxChunk, the largest
  // that fits first. Each call of a product by B streams all of B, whatever its rows: 59 rows
  // as 32+16+8+2+1 took 1.56 ms for a [4864, 256] B, against 0.95 ms for one exact plan. So
  // where `overlap` allows (f writes its rows without reading them), the rest after the first
  // chunk is one chunk that ends at row M and may overlap rows already done: 48 rows, then 12
  // over rows 47 to 58, 1.08 ms. The rows done twice get the same values, since a row's sum does
  // not depend on its chunk (packed_b.h).
  template <class F>
  static Status for_each_chunk(int64_t M, bool overlap, F&& f) {
    int64_t r0 = 0;
    while (r0 < M) {
      if (overlap && r0 > 0 && M - r0 < kMaxChunk) {
        const int64_t rest = chunk_above(M - r0);
        return f(M - rest, rest);
      }
      const int64_t rows = chunk_below(std::min(M - r0, kMaxChunk));
      RECUR_RETURN_IF_ERROR(f(r0, rows));
      r0 += rows;
    }
    return ok_status();
  }

 private:
  bool shared_;
  std::mutex mu_;
  std::map<Key, int64_t> runs_;  // of the keys without a plan of their own; bounded
  std::set<Key> exact_;
};

// A row-major f32 descriptor for `shape` (a scalar is {1}).
dnnl::memory::desc dense_desc(const Shape& shape);
// An f32 descriptor with the given strides. Neither allocates (up to DNNL_MAX_NDIMS dims).
dnnl::memory::desc strided_desc(std::span<const int64_t> dims, std::span<const int64_t> strides);
// The primitive attributes every kernel uses: a user scratchpad.
dnnl::primitive_attr user_scratchpad_attr();

// Whether a primitive's implementation is one of oneDNN's generic fallbacks ("ref", "simple").
bool generic_impl(std::string_view impl);

// Creates a primitive under `threads` OpenMP threads from `make_desc()`, its descriptor. The
// descriptor is made here, inside the conversion of oneDNN's errors, since making one checks
// the shapes and throws for those oneDNN refuses (a pooling pad as wide as its window). Where
// oneDNN's first implementation's name starts with `avoid`, the next that neither does nor is
// generic, if any.
template <class Prim, class MakeDesc>
Result<CachedPrimitive> make_primitive(const MakeDesc& make_desc, const dnnl::primitive_attr& attr,
                                       Threads threads, const std::string& what,
                                       std::string_view avoid = {}) {
  CachedPrimitive out;
  Status st = dnnl_try(what, [&] {
    ThreadScope scope(threads.max);
    // The descriptor outlives the iteration below: oneDNN's implementation iterator reads it
    // at each step (a temporary's left next_impl() finding nothing).
    const auto desc = make_desc();
    typename Prim::primitive_desc pd(desc, attr, cpu_engine());
    const auto avoided = [avoid](const typename Prim::primitive_desc& p) {
      return std::string_view(p.impl_info_str()).starts_with(avoid);
    };
    if (!avoid.empty() && avoided(pd)) {
      bool found = false;
      while (!found && pd.next_impl()) {
        found = !avoided(pd) && !generic_impl(pd.impl_info_str());
      }
      if (!found) pd = typename Prim::primitive_desc(desc, attr, cpu_engine());
    }
    out.scratchpad = pd.scratchpad_desc();
    out.impl = pd.impl_info_str();
    out.primitive = Prim(pd);
    out.threads = threads.max;
    out.shrink = threads.shrink;
  });
  if (!st.ok()) return st;
  return out;
}

// Executes `p` with `binds` plus a scratchpad of its own from `pool`.
Status execute_primitive(const CachedPrimitive& p, std::span<const Bind> binds, ScratchPool& pool,
                         const std::string& what);
inline Status execute_primitive(const CachedPrimitive& p, std::initializer_list<Bind> binds,
                                ScratchPool& pool, const std::string& what) {
  return execute_primitive(p, std::span<const Bind>(binds.begin(), binds.size()), pool, what);
}

// Threads for an operation of `work` elements or multiply-adds: one below a size where an
// OpenMP team costs more than it saves, else `max_threads`. The bound is set for a busy
// machine, not a quiet one: libgomp's threads spin at every barrier, so a team whose second
// thread cannot get a core (another process holds it) stalls for a scheduler time slice, a
// few milliseconds, at each primitive. Below about 4M multiply-adds (tens of microseconds on
// one core) a second thread saves less than one such stall costs: models/vad_streaming went
// from 1.8 ms to 220 ms per chunk at --threads 2 beside a busy loop (tools/bench/busy_core.py).
inline int threads_for(double work, int max_threads) { return work < 4194304.0 ? 1 : max_threads; }
inline Threads threads_for(double work, Threads t) { return {threads_for(work, t.max), t.shrink}; }

// The input's dtype is float32 (or not yet known).
Claim claim_float32_input(const Node& node, const Graph& graph, size_t i = 0);

// The claim of recur's own loops along the last axis (ArgMax, ArgMin, TopK): the node's `axis`
// (default `default_axis`) is the last axis of a float32 input whose rank is known at load, on
// a processor with AVX-512.
Claim claim_last_axis_float32(const Node& node, const Graph& graph, int64_t default_axis);

}  // namespace recur::onednn
