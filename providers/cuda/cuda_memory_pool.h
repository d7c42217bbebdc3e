// Device memory and host<->device copies for the CUDA providers, and the device-memory hooks
// that Tensor uses for Device::Kind::kCUDA.
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/core/status.h"

namespace recur::cuda {

// Device memory from a per-device stream-ordered pool that keeps freed blocks for reuse (the
// caching allocator). Memory is allocated on the current stream (or a synchronized scoped
// one) and freed on the stream current when the last reference goes, or else, all its uses
// being synchronized by then, on the freeing thread's per-thread default stream.
Result<std::shared_ptr<void>> allocate_device(size_t bytes, int device);

// Synchronous copies; host memory goes through pinned staging buffers, in chunks, so
// pageable host memory costs one memcpy and no driver-side staging.
Status copy_host_to_device(void* dst, int device, const void* src, size_t bytes);
Status copy_device_to_host(void* dst, const void* src, int device, size_t bytes);
Status copy_device_to_device(void* dst, int dst_device, const void* src, int src_device,
                             size_t bytes);

// Installs the runtime/core/device_memory.h hooks for Device::Kind::kCUDA (idempotent).
void install_device_memory_hooks();

// Device memory that the calling thread's allocations come from while a CUDA graph is
// recorded, so that every address stays valid for the replays. The recorder owns it.
struct RecordingArena {
  int device = 0;
  char* base = nullptr;
  size_t size = 0;
  size_t used = 0;
  bool overflow = false;
};
constexpr size_t kArenaAlign = 256;

// While set, the calling thread's allocations on arena->device come from `arena` (null: from
// the pool again).
void set_thread_arena(RecordingArena* arena);
// While set, the calling thread's allocations add their aligned sizes to *counter (null:
// stop counting).
void set_thread_allocation_counter(size_t* counter);

}  // namespace recur::cuda
