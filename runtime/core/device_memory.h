// How host code reaches device memory without depending on a device library. A device
// provider installs its hooks when it is created.
#pragma once

#include <cstddef>
#include <memory>

#include "recur/tensor.h"
#include "runtime/core/status.h"

namespace recur {

struct DeviceMemoryHooks {
  // Returns device memory kept alive by the returned pointer (null on failure).
  std::shared_ptr<void> (*allocate)(size_t bytes, int device_index) = nullptr;
  // Copies between host and device (or device and device); synchronous.
  Status (*copy)(void* dst, Device dst_device, const void* src, Device src_device,
                 size_t bytes) = nullptr;
};

// Safe to call while other threads read the hooks: a set read earlier stays whole and valid
// for the process. Empty hooks (both null) uninstall them.
void set_device_memory_hooks(Device::Kind kind, DeviceMemoryHooks hooks);
// The hooks for `kind`, or null when none are installed.
const DeviceMemoryHooks* device_memory_hooks(Device::Kind kind);

// Copies `src` into `dst` (same dtype and element count), across devices if needed.
Status copy_tensor(const Tensor& src, Tensor& dst);
// A copy of `src` on `device`.
Result<Tensor> to_device(const Tensor& src, Device device);

}  // namespace recur
