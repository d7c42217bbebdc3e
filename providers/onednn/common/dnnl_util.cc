#include "providers/onednn/common/dnnl_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>

#include "recur/version.h"
#include "runtime/core/huge_pages.h"

namespace recur::onednn {

int64_t core_l2_bytes() {
  static const int64_t bytes = std::max<long>(0, ::sysconf(_SC_LEVEL2_CACHE_SIZE));
  return bytes;
}

std::string tuning_env() {
  static const std::string env = [] {
    std::string model = "unknown";
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
      if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
        model = line.substr(line.find(':') + 1);
        model.erase(0, model.find_first_not_of(' '));
        break;
      }
    }
    const dnnl_version_t* v = dnnl_version();
    return "cpu=" + model +
           ";isa=" + std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa())) +
           ";onednn=" + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + "+" + v->hash + ";recur=" + recur::version();
  }();
  return env;
}

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

int max_threads_default() {
  static const int n = std::max(1, omp_get_max_threads());
  return n;
}

ThreadScope::ThreadScope(int threads) : previous_(omp_get_max_threads()) {
  if (threads != previous_) omp_set_num_threads(std::max(1, threads));
}

ThreadScope::~ThreadScope() {
  if (omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
}

Status dnnl_error_status(const dnnl::error& e, const std::string& what) {
  std::string msg = what + ": oneDNN: " + e.what();
  switch (e.status) {
    case dnnl_unimplemented:
      return Status(ErrorCode::kNotImplemented, msg + " (no oneDNN implementation)");
    case dnnl_out_of_memory:
      return Status(ErrorCode::kDevice, msg + " (out of memory)");
    case dnnl_invalid_arguments:
      return Status(ErrorCode::kInvalidArgument, msg);
    default:
      return Status(ErrorCode::kDevice, msg);
  }
}

namespace {
std::atomic<size_t> g_aligned_bytes{0};
}  // namespace

size_t aligned_bytes_in_use() { return g_aligned_bytes.load(std::memory_order_relaxed); }

AlignedBuffer::AlignedBuffer(size_t n, bool huge_pages) : bytes(n) {
  if (n == 0) return;
  // Buffers filled whole (packed weights) on huge pages (runtime/core/huge_pages.h): beside
  // the faults, each time step that reads all the weights needs as many TLB entries as the
  // second-level TLB holds with 4 KiB pages. A first run of resnet_ocr had spent 7.4 ms
  // filling its 2.3 MiB of one convolution's Winograd weights on 4 KiB pages.
  huge = huge_pages && n >= kHugePageBytes;
  data = alloc_written_whole(n, huge ? n : 0, 64);
  if (!data) throw std::bad_alloc();
  g_aligned_bytes.fetch_add(n, std::memory_order_relaxed);
}

void AlignedBuffer::hold_huge_pages(bool on) {
  if (!huge) return;
  const size_t whole = bytes / kHugePageBytes * kHugePageBytes;
  ::madvise(data, whole, on ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#ifndef MADV_COLLAPSE
  constexpr int MADV_COLLAPSE = 25;  // Linux 6.1
#endif
  if (on) ::madvise(data, whole, MADV_COLLAPSE);  // a hint too: failure leaves 4 KiB pages
}

AlignedBuffer::~AlignedBuffer() {
  if (data) g_aligned_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  free_written_whole(data, bytes, huge ? bytes : 0);
}

ArgsPool::Lease::~Lease() {
  if (pool_ && args_) pool_->give_back(std::move(args_));
}

void ArgsPool::Lease::bind(int arg, const dnnl::memory::desc& md, const void* data) {
  auto& mems = args_->memories;
  auto it = std::find_if(mems.begin(), mems.end(), [&](const auto& m) { return m.first == arg; });
  if (it == mems.end()) {
    mems.emplace_back(arg, make_memory(md, data));
    args_->flat.push_back({arg, mems.back().second.get()});
    return;
  }
  if (it->second.get_data_handle() == data) return;
  bool padded = false;
  for (int i = 0; i < md.data.ndims; ++i) padded |= md.data.padded_dims[i] != md.data.dims[i];
  if (padded) {
    it->second = make_memory(md, data);
    args_->flat[static_cast<size_t>(it - mems.begin())].memory = it->second.get();
  } else {
    it->second.set_data_handle(const_cast<void*>(data));
  }
}

void ArgsPool::Lease::execute(const dnnl::primitive& p, dnnl::stream& stream) const {
  const auto& flat = args_->flat;
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(p.get(), stream.get(), static_cast<int>(flat.size()), flat.data()),
      "could not execute a primitive");
}

ArgsPool::Lease ArgsPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      auto args = std::move(free_.back());
      free_.pop_back();
      return Lease(this, std::move(args));
    }
  }
  return Lease(this, std::make_unique<Args>());
}

void ArgsPool::give_back(std::unique_ptr<Args> args) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(std::move(args));
}

// The free buffers every ScratchPool shares, and the leases out.
struct ScratchPool::Shared {
  // Keeps as many free buffers as were ever leased at once (the runs that overlap, the
  // buffers one run holds together, the job pool's parts), the largest: a smaller one is of no
  // use once a larger one is free. A kernel fed growing sizes kept every size it had outgrown.
  static constexpr size_t kKeep = 64;
  void give_back(std::unique_ptr<AlignedBuffer> buf) {
    std::lock_guard<std::mutex> lock(mu);
    --leased;
    free.push_back(std::move(buf));
    while (free.size() > std::min(kKeep, most_leased)) {
      free.erase(std::min_element(free.begin(), free.end(), [](const auto& a, const auto& b) {
        return a->bytes < b->bytes;
      }));
    }
  }
  std::mutex mu;
  std::vector<std::unique_ptr<AlignedBuffer>> free;
  size_t leased = 0, most_leased = 0;  // leases out now, and the most ever out at once
};

ScratchPool::ScratchPool() {
  // The process's set while any pool holds it; a new one after the last pool went.
  static std::mutex mu;
  static std::weak_ptr<Shared> current;
  std::lock_guard<std::mutex> lock(mu);
  shared_ = current.lock();
  if (!shared_) {
    shared_ = std::make_shared<Shared>();
    current = shared_;
  }
}

ScratchPool::Lease::~Lease() {
  if (pool_ && buf_) pool_->give_back(std::move(buf_));
  if (budget_) budget_->release(charged_);
}

ScratchPool::Lease ScratchPool::acquire(size_t bytes, bool dense) {
  if (bytes == 0) return Lease();
  std::shared_ptr<MemoryBudget> budget;
  if (MemoryBudget* b = current_memory_budget()) {
    if (!b->try_charge(bytes)) b->exceeded(bytes, "oneDNN scratch memory").throw_if_error();
    budget = b->shared_from_this();
  }
  Shared& pool = *shared_;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.most_leased = std::max(pool.most_leased, ++pool.leased);
    // The smallest free buffer that fits, on the pages asked for, else on the other pages: the
    // pool keeps the largest buffers, and a sparse lease that found only a buffer on huge pages
    // (a Winograd convolution's scratchpad at the widest input yet) allocated a buffer of its
    // own on every run, each given back at once and freed (an OCR model fed 37 line widths
    // twice: 86 buffers of 1 to 12 MiB on the second pass, and 32 MiB of heap held free after
    // it). Pages of a buffer on huge pages that was filled are resident already, and a dense
    // lease on 4 KiB pages only faults the pages no lease has touched at that size.
    const bool huge = dense && bytes >= kHugePageBytes;
    size_t best = pool.free.size();
    auto better = [&](size_t i) {
      if (pool.free[i]->bytes < bytes) return false;
      if (best == pool.free.size()) return true;
      const bool same = pool.free[i]->huge == huge, best_same = pool.free[best]->huge == huge;
      if (same != best_same) return same;
      return pool.free[i]->bytes < pool.free[best]->bytes;
    };
    for (size_t i = 0; i < pool.free.size(); ++i)
      if (better(i)) best = i;
    if (best != pool.free.size()) {
      auto buf = std::move(pool.free[best]);
      pool.free.erase(pool.free.begin() + static_cast<std::ptrdiff_t>(best));
      return Lease(&pool, std::move(buf), std::move(budget), bytes);
    }
  }
  // Not on huge pages unless dense: a scratchpad is mostly touched sparsely (an RNN
  // primitive's holds areas its inference never writes), and each 2 MiB page touched would be
  // resident whole. bilstm's two directions side by side, in blocks of 34 steps, took 47 MiB
  // over an empty model with huge pages, 32 without.
  auto buf = std::make_unique<AlignedBuffer>(bytes, /*huge_pages=*/dense);
  return Lease(&pool, std::move(buf), std::move(budget), bytes);
}

}  // namespace recur::onednn
