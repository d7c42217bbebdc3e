// Device memory from a stream-ordered caching pool per device, pinned staging for host copies,
// and the device-memory hooks that Tensor uses for Device::Kind::kCUDA.
#include "providers/cuda/cuda_memory_pool.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_stream.h"
#include "runtime/core/device_memory.h"

namespace recur::cuda {

namespace {

// Pinned staging chunk: large enough to reach full PCIe/NVLink bandwidth, small enough that
// two per copy in flight cost little pinned memory.
constexpr size_t kStagingChunk = size_t{4} << 20;

// The pools below are process-wide, not per provider: Tensor::empty(..., Device::cuda(i)) and
// tensor copies reach them through the device-memory hooks without any provider, and a block
// cached by one session's run is reused by the next session's.
struct MemPool {
  std::once_flag once;
  cudaMemPool_t pool = nullptr;
  Status status;
};

Result<cudaMemPool_t> memory_pool(int device) {
  static MemPool pools[kMaxDevices];
  MemPool& mp = pools[device];
  std::call_once(mp.once, [&mp, device] {
    auto create = [&]() -> Status {
      DeviceGuard guard(device);
      RECUR_RETURN_IF_ERROR(guard.status());
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.handleTypes = cudaMemHandleTypeNone;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = device;
      RECUR_CUDA_CHECK(cudaMemPoolCreate(&mp.pool, &props));
      // Keep every freed block cached: the pool never gives memory back on synchronize.
      uint64_t threshold = UINT64_MAX;
      RECUR_CUDA_CHECK(
          cudaMemPoolSetAttribute(mp.pool, cudaMemPoolAttrReleaseThreshold, &threshold));
      return ok_status();
    };
    mp.status = create();
  });
  RECUR_RETURN_IF_ERROR(mp.status);
  return mp.pool;
}

struct StagingBuffer {
  void* host = nullptr;
  cudaEvent_t done = nullptr;
};

struct StagingPool {
  std::mutex mu;
  std::vector<StagingBuffer*> free;
};

StagingPool& staging_pool(int device) {
  static StagingPool pools[kMaxDevices];
  return pools[device];
}

// Up to two pinned chunks for one copy on `stream`; returned to the pool when the lease ends.
// A buffer in the pool has no transfer in flight: a copy fills or reads the first two it
// takes without waiting.
class StagingLease {
 public:
  StagingLease(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  ~StagingLease() {
    // Unless the copy saw its transfers finish, one may still be reading or writing a buffer
    // (an error path): wait for them. A failure is dropped (the copy reports its own error)
    // and cleared, so that the thread's next kernel launch does not report it.
    if (!idle_ && (bufs_[0] || bufs_[1]) && cudaStreamSynchronize(stream_) != cudaSuccess) {
      (void)cudaGetLastError();
    }
    StagingPool& p = staging_pool(device_);
    std::lock_guard lock(p.mu);
    for (StagingBuffer* b : bufs_)
      if (b) p.free.push_back(b);
  }
  Result<StagingBuffer*> get(int k) {
    StagingBuffer*& b = bufs_[k & 1];
    if (b) return b;
    StagingPool& p = staging_pool(device_);
    {
      std::lock_guard lock(p.mu);
      if (!p.free.empty()) {
        b = p.free.back();
        p.free.pop_back();
        return b;
      }
    }
    auto nb = std::make_unique<StagingBuffer>();
    RECUR_CUDA_CHECK(cudaHostAlloc(&nb->host, kStagingChunk, cudaHostAllocPortable));
    const cudaError_t ev = cudaEventCreateWithFlags(&nb->done, cudaEventDisableTiming);
    if (ev != cudaSuccess) {
      if (cudaFreeHost(nb->host) != cudaSuccess) (void)cudaGetLastError();  // not leaked
      return cuda_error(ev, "cudaEventCreateWithFlags");
    }
    b = nb.release();  // pooled for the process's lifetime
    return b;
  }

  // Every transfer through the buffers has completed.
  void set_idle() { idle_ = true; }

 private:
  int device_;
  cudaStream_t stream_;
  StagingBuffer* bufs_[2] = {nullptr, nullptr};
  bool idle_ = false;
};

thread_local RecordingArena* t_arena = nullptr;
thread_local size_t* t_measured = nullptr;

size_t aligned(size_t b) {
  return (std::max<size_t>(b, 1) + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
}

}  // namespace

void set_thread_arena(RecordingArena* arena) { t_arena = arena; }

void set_thread_allocation_counter(size_t* counter) { t_measured = counter; }

Result<std::shared_ptr<void>> allocate_device(size_t bytes, int device) {
  RECUR_RETURN_IF_ERROR(check_device_index(device));
  if (t_measured) *t_measured += aligned(bytes);
  if (t_arena && t_arena->device == device) {
    RecordingArena& a = *t_arena;
    if (a.used + aligned(bytes) > a.size) {
      a.overflow = true;
      return Status(ErrorCode::kDevice, "the CUDA graph recording ran out of its arena (" +
                                            std::to_string(a.size) + " bytes)");
    }
    void* p = a.base + a.used;
    a.used += aligned(bytes);
    // The recorder owns the arena: nothing to free, and the address stays valid for replays.
    return std::shared_ptr<void>(p, [](void*) {});
  }
  const bool in_run = current_stream(device) != nullptr;
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  RECUR_ASSIGN_OR_RETURN(cudaMemPool_t pool, memory_pool(device));
  void* p = nullptr;
  const cudaStream_t stream = scoped.stream();
  const cudaError_t err = cudaMallocFromPoolAsync(&p, std::max<size_t>(bytes, 1), pool, stream);
  if (err != cudaSuccess) {
    // Reported here: the thread's next kernel launcher, which returns cudaGetLastError(),
    // must not report it again as its own.
    (void)cudaGetLastError();
    return Status(ErrorCode::kDevice, "out of memory on cuda:" + std::to_string(device) +
                                          " allocating " + std::to_string(bytes) + " bytes (" +
                                          cudaGetErrorString(err) + ")");
  }
  // The allocation is ordered on `stream`: a run's later work on it needs nothing more.
  // Outside a run, a synchronize makes the block usable from any stream.
  if (!in_run) RECUR_RETURN_IF_ERROR(scoped.synchronize());
  return std::shared_ptr<void>(p, [device](void* q) {
    DeviceGuard guard(device);
    StreamContext* cur = current_stream(device);
    // In a run (or ScopedStream), freed in the order of its stream. Otherwise every use of
    // the block has finished (work outside a run is synchronized, and a run synchronizes its
    // stream before its state ends), so any stream will do but the one it was allocated on:
    // that one is back in the pool, and the thread that leased it next may be recording a
    // CUDA graph on it, where cudaFreeAsync would add a free node for memory the graph never
    // allocated. This thread's per-thread default stream is never recorded, and since every
    // stream recur leases is non-blocking, freeing on it neither waits for nor joins them.
    // A deleter cannot report: a failure is cleared, or the thread's next kernel launcher
    // (which returns cudaGetLastError()) would report it as its own.
    if (cudaFreeAsync(q, cur ? cur->stream() : cudaStreamPerThread) != cudaSuccess) {
      (void)cudaGetLastError();
    }
  });
}

Status copy_host_to_device(void* dst, int device, const void* src, size_t bytes) {
  if (bytes == 0) return ok_status();
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  const cudaStream_t s = scoped.stream();
  StagingLease staging(device, s);
  for (size_t off = 0, k = 0; off < bytes; off += kStagingChunk, ++k) {
    const size_t n = std::min(kStagingChunk, bytes - off);
    RECUR_ASSIGN_OR_RETURN(StagingBuffer * b, staging.get(static_cast<int>(k)));
    // Chunk k-2 used this buffer: wait until its transfer has left it.
    if (k >= 2) RECUR_CUDA_CHECK(cudaEventSynchronize(b->done));
    std::memcpy(b->host, static_cast<const char*>(src) + off, n);
    RECUR_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<char*>(dst) + off, b->host, n, cudaMemcpyHostToDevice, s));
    RECUR_CUDA_CHECK(cudaEventRecord(b->done, s));
  }
  RECUR_RETURN_IF_ERROR(scoped.synchronize());
  staging.set_idle();
  return ok_status();
}

Status copy_device_to_host(void* dst, const void* src, int device, size_t bytes) {
  if (bytes == 0) return ok_status();
  ScopedStream scoped(device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  const cudaStream_t s = scoped.stream();
  StagingLease staging(device, s);
  const size_t chunks = (bytes + kStagingChunk - 1) / kStagingChunk;
  auto enqueue = [&](size_t k) -> Status {
    const size_t off = k * kStagingChunk;
    const size_t n = std::min(kStagingChunk, bytes - off);
    RECUR_ASSIGN_OR_RETURN(StagingBuffer * b, staging.get(static_cast<int>(k)));
    RECUR_CUDA_CHECK(cudaMemcpyAsync(b->host, static_cast<const char*>(src) + off, n,
                                     cudaMemcpyDeviceToHost, s));
    RECUR_CUDA_CHECK(cudaEventRecord(b->done, s));
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(enqueue(0));
  for (size_t k = 0; k < chunks; ++k) {
    // Overlap: chunk k+1 transfers while chunk k is copied out of its buffer.
    if (k + 1 < chunks) RECUR_RETURN_IF_ERROR(enqueue(k + 1));
    RECUR_ASSIGN_OR_RETURN(StagingBuffer * b, staging.get(static_cast<int>(k)));
    RECUR_CUDA_CHECK(cudaEventSynchronize(b->done));
    const size_t off = k * kStagingChunk;
    std::memcpy(static_cast<char*>(dst) + off, b->host, std::min(kStagingChunk, bytes - off));
  }
  // Each chunk's transfer was waited for before it was copied out.
  staging.set_idle();
  return ok_status();
}

Status copy_device_to_device(void* dst, int dst_device, const void* src, int src_device,
                             size_t bytes) {
  if (bytes == 0) return ok_status();
  const bool in_run = current_stream(dst_device) != nullptr;
  ScopedStream scoped(dst_device);
  RECUR_RETURN_IF_ERROR(scoped.status());
  if (dst_device == src_device) {
    RECUR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, scoped.stream()));
  } else {
    RECUR_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, scoped.stream()));
  }
  // In a run, later work on the run's stream is ordered after the copy.
  return in_run ? ok_status() : scoped.synchronize();
}

namespace {

std::shared_ptr<void> hook_allocate(size_t bytes, int device) {
  auto r = allocate_device(bytes, device);
  return r.ok() ? std::move(r).value() : nullptr;
}

Status hook_copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (src_device.is_cpu() && dst_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return ok_status();
  }
  if (src_device.is_cpu()) return copy_host_to_device(dst, dst_device.index, src, bytes);
  if (dst_device.is_cpu()) return copy_device_to_host(dst, src, src_device.index, bytes);
  return copy_device_to_device(dst, dst_device.index, src, src_device.index, bytes);
}

}  // namespace

// Once per process: the hooks belong to the device kind, not to a provider, so that CUDA
// tensors can be made and copied with no session at all.
void install_device_memory_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    DeviceMemoryHooks hooks;
    hooks.allocate = &hook_allocate;
    hooks.copy = &hook_copy;
    set_device_memory_hooks(Device::Kind::kCUDA, hooks);
  });
}

}  // namespace recur::cuda
