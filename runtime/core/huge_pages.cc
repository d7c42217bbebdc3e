#include "runtime/core/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>

namespace recur {

namespace {

size_t whole_pages(size_t size, size_t written) {
  return std::min(written, size) / kHugePageBytes * kHugePageBytes;
}

size_t mapped_span(size_t size) {
  return (size + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

}  // namespace

void* alloc_written_whole(size_t size, size_t written, size_t align) {
  if (size > std::numeric_limits<size_t>::max() / 2) return nullptr;  // the spans below overflow
  const size_t whole = whole_pages(size, written);
  if (whole == 0) {
    // aligned_alloc wants a size that is a multiple of the alignment.
    return std::aligned_alloc(align, (std::max<size_t>(size, 1) + align - 1) / align * align);
  }
  // A mapping of its own, not malloc's heap: the huge-page advice stays with the address range,
  // and a heap range would keep it after the free, for small allocations that would then each
  // make a whole 2 MiB page resident.
  const size_t span = mapped_span(size);
  void* m = ::mmap(nullptr, span + kHugePageBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t start = (base + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  // The slack before the 2 MiB boundary and after the span goes back.
  if (start > base) ::munmap(m, start - base);
  const uintptr_t end = start + span, map_end = base + span + kHugePageBytes;
  if (map_end > end) ::munmap(reinterpret_cast<void*>(end), map_end - end);
  void* p = reinterpret_cast<void*>(start);
  ::madvise(p, whole, MADV_HUGEPAGE);  // a hint: where the system declines, 4 KiB pages
  return p;
}

void free_written_whole(void* p, size_t size, size_t written) {
  if (!p) return;
  if (whole_pages(size, written) == 0) {
    std::free(p);
    return;
  }
  ::munmap(p, mapped_span(size));
}

}  // namespace recur
