#include "runtime/core/page_discard.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "runtime/core/code_layout.h"

namespace recur {

namespace {

RECUR_LOAD_PATH uintptr_t page_size() {
  static const uintptr_t size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

RECUR_LOAD_PATH void discard_pages(const void* begin, const void* end) {
  const uintptr_t page = page_size();
  const uintptr_t b = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const uintptr_t e = reinterpret_cast<uintptr_t>(end) / page * page;
  // A failure leaves the pages resident, which only costs memory.
  if (b < e) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

RECUR_LOAD_PATH DiscardBehind::DiscardBehind(const void* begin, const void* end)
    : done_(static_cast<const char*>(begin)),
      end_(static_cast<const char*>(end)),
      step_(std::max<size_t>(size_t{1} << 16, static_cast<size_t>(end_ - done_) / 16)) {}

RECUR_LOAD_PATH void DiscardBehind::read_to(const void* p) {
  const char* to = std::min(static_cast<const char*>(p), end_);
  if (!done_ || to <= done_ || (static_cast<size_t>(to - done_) < step_ && to < end_)) return;
  discard_pages(done_, to);
  // From the start of the page that holds `to`: the next step discards it once it is read.
  const uintptr_t page = page_size();
  const char* aligned =
      reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(to) / page * page);
  done_ = std::max(done_, aligned);
}

}  // namespace recur
