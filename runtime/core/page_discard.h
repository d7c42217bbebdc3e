// Giving the pages of a buffer back to the kernel while the buffer is still allocated.
#pragma once

#include <cstddef>

namespace recur {

// Returns the whole pages inside [begin, end) to the kernel (madvise MADV_DONTNEED), so that
// they leave the process's resident memory at once; the partial pages at either end are kept.
// What the returned pages held is gone: private anonymous memory reads as zeros afterwards, a
// private file mapping as the file's bytes. Only for bytes that nothing reads again, in memory
// the caller owns outright. The pages stay mapped, so freeing the buffer afterwards is still
// right.
void discard_pages(const void* begin, const void* end);

// discard_pages behind a reader that goes through [begin, end) from front to back for the last
// time: a weight matrix that a kernel repacks and then frees. It discards in steps of a
// sixteenth of the buffer (64 KiB at least): at most a step of it stays resident behind the
// reader, for one madvise call per step.
class DiscardBehind {
 public:
  DiscardBehind() = default;  // discards nothing
  DiscardBehind(const void* begin, const void* end);
  // Everything before p has been read for the last time.
  void read_to(const void* p);

 private:
  const char* done_ = nullptr;  // discarded up to here (page-aligned after the first step)
  const char* end_ = nullptr;
  size_t step_ = 0;
};

}  // namespace recur
