// Host memory for buffers written whole, on transparent huge pages where the system gives them
// on request (transparent_hugepage=madvise, Debian's default).
//
// A first run writes every buffer it makes for the first time, and each 4 KiB page of it
// faults in on its first touch: dear in a virtual machine (on the 2-vCPU EPYC about 12 us a
// page, against 0.1-0.4 ms for a whole 2 MiB page), and the larger part of a first run's time
// for a model of large activations. Only the whole 2 MiB pages within the bytes the caller
// will write are asked for: a huge page is resident whole once touched, so the tail past the
// last one stays on 4 KiB pages and nothing beyond those bytes becomes resident.
#pragma once

#include <cstddef>

namespace recur {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `size` bytes aligned to `align` (a power of two from sizeof(void*) to 2 MiB), or nullptr where
// the allocation fails. Where `written` (the bytes from the start that are written whole, at
// most `size`) holds a whole huge page, the buffer is a mapping of its own on a 2 MiB boundary
// and those whole pages are asked for as huge pages (a hint: where the system declines, they
// are 4 KiB pages); otherwise it is malloc's.
void* alloc_written_whole(size_t size, size_t written, size_t align);
// Releases what alloc_written_whole(size, written, ...) returned (nothing for nullptr).
void free_written_whole(void* p, size_t size, size_t written);

}  // namespace recur
