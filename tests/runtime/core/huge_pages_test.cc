// alloc_written_whole (runtime/core/huge_pages.h): which bytes it asks huge pages for, read
// back from the kernel's own account of the mapping (/proc/self/smaps: "hg" among a mapping's
// VmFlags is MADV_HUGEPAGE).
#include "runtime/core/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "runtime/engine/session/memory_plan.h"

namespace recur {
namespace {

// 1 where the mapping that holds `p` carries MADV_HUGEPAGE, 0 where it does not, -1 where
// smaps has no mapping for it or cannot be read.
int huge_flag_at(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.find(" hg") != std::string::npos;
  }
  return -1;
}

constexpr size_t kMiB = size_t{1} << 20;

// A kernel built without transparent huge pages refuses MADV_HUGEPAGE.
bool kernel_has_thp() {
  return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
}

TEST(HugePages, WholeHugePagesOfTheWrittenBytes) {
  if (!kernel_has_thp()) GTEST_SKIP() << "this kernel has no transparent huge pages";
  // 5 MiB written of 6: its first two 2 MiB pages asked for, the rest left to 4 KiB pages.
  auto* p = static_cast<unsigned char*>(alloc_written_whole(6 * kMiB, 5 * kMiB, 64));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u);
  std::memset(p, 1, 5 * kMiB);
  EXPECT_EQ(huge_flag_at(p), 1);
  EXPECT_EQ(huge_flag_at(p + 4 * kMiB - 1), 1);
  EXPECT_EQ(huge_flag_at(p + 4 * kMiB), 0) << "the tail past the last whole page";
  free_written_whole(p, 6 * kMiB, 5 * kMiB);
}

TEST(HugePages, LessThanAHugePageWrittenStaysOnSmallPages) {
  auto* p = static_cast<unsigned char*>(alloc_written_whole(8 * kMiB, kMiB, 64));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::memset(p, 1, kMiB);
  EXPECT_EQ(huge_flag_at(p), 0);
  free_written_whole(p, 8 * kMiB, kMiB);
  // Sizes that are not multiples of the alignment, and nothing at all.
  void* q = alloc_written_whole(100, 100, 64);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u);
  free_written_whole(q, 100, 100);
  void* z = alloc_written_whole(0, 0, 64);
  EXPECT_NE(z, nullptr);
  free_written_whole(z, 0, 0);
}

// A size no mapping can hold fails with nullptr, not an overflowed span.
TEST(HugePages, ImpossibleSizesFailCleanly) {
  const size_t huge = std::numeric_limits<size_t>::max() - 1024;
  EXPECT_EQ(alloc_written_whole(huge, huge, 64), nullptr);
  EXPECT_EQ(alloc_written_whole(huge, 0, 64), nullptr);
  free_written_whole(nullptr, huge, huge);  // nothing to release
}

// The session's block cache: a block for an activation of 3 MiB (a 4 MiB block) has its first
// 2 MiB on a huge page, and one for a value of 1 MiB none.
TEST(HugePages, BlockCacheBlocksOfLargeValues) {
  if (!kernel_has_thp()) GTEST_SKIP() << "this kernel has no transparent huge pages";
  BlockCache cache;
  const std::shared_ptr<void>* big = cache.take(3 * kMiB, nullptr);
  ASSERT_NE(big, nullptr);
  void* b = big->get();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % kHugePageBytes, 0u);
  std::memset(b, 1, 3 * kMiB);
  EXPECT_EQ(huge_flag_at(b), 1);
  const std::shared_ptr<void>* small = cache.take(kMiB, nullptr);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(huge_flag_at(small->get()), 0);
}

}  // namespace
}  // namespace recur
