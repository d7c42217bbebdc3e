// The device-memory hooks are installed again by every GPU provider a session creates while
// other threads' runs read them: a reader must always see one whole set, never half of one.
#include "runtime/core/device_memory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace recur {
namespace {

// Two hook sets told apart by their functions (never called).
std::shared_ptr<void> allocate_a(size_t, int) { return nullptr; }
std::shared_ptr<void> allocate_b(size_t, int) { return nullptr; }
Status copy_a(void*, Device, const void*, Device, size_t) { return ok_status(); }
Status copy_b(void*, Device, const void*, Device, size_t) { return ok_status(); }

// Puts back what the process had (the CUDA providers' hooks in a CUDA build, none otherwise).
class SavedHooks {
 public:
  SavedHooks() {
    if (const DeviceMemoryHooks* h = device_memory_hooks(Device::Kind::kCUDA)) saved_ = *h;
  }
  ~SavedHooks() { set_device_memory_hooks(Device::Kind::kCUDA, saved_); }

 private:
  DeviceMemoryHooks saved_;
};

TEST(DeviceMemoryHooks, EmptyHooksUninstall) {
  SavedHooks saved;
  set_device_memory_hooks(Device::Kind::kCUDA, {&allocate_a, &copy_a});
  ASSERT_NE(device_memory_hooks(Device::Kind::kCUDA), nullptr);
  EXPECT_EQ(device_memory_hooks(Device::Kind::kCUDA)->allocate, &allocate_a);
  set_device_memory_hooks(Device::Kind::kCUDA, {});
  EXPECT_EQ(device_memory_hooks(Device::Kind::kCUDA), nullptr);
  EXPECT_EQ(device_memory_hooks(Device::Kind::kCPU), nullptr);
}

TEST(DeviceMemoryHooks, AReaderNeverSeesHalfOfASet) {
  SavedHooks saved;
  const DeviceMemoryHooks a{&allocate_a, &copy_a}, b{&allocate_b, &copy_b};
  set_device_memory_hooks(Device::Kind::kCUDA, a);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      set_device_memory_hooks(Device::Kind::kCUDA, (i & 1) != 0 ? b : a);
    }
  });
  // A set read earlier stays whole: Tensor::empty checks hooks->allocate, then calls it. The
  // spin between the two reads widens that gap, so that a torn set shows within the time.
  int mixed = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (mixed == 0 && std::chrono::steady_clock::now() < end) {
    for (int k = 0; k < 10000; ++k) {
      const DeviceMemoryHooks* h = device_memory_hooks(Device::Kind::kCUDA);
      if (h == nullptr) {
        ++mixed;
        continue;
      }
      const auto alloc = h->allocate;
      for (volatile int spin = 0; spin < 20;) spin = spin + 1;
      const auto copy = h->copy;
      if ((alloc == &allocate_a) != (copy == &copy_a)) ++mixed;
    }
  }
  stop = true;
  writer.join();
  EXPECT_EQ(mixed, 0);
}

}  // namespace
}  // namespace recur
