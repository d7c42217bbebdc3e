// Where the code that creates a session lives in the binary.
#pragma once

// RECUR_LOAD_PATH marks a function that session creation runs for a model's weights and RNN
// nodes: initializer parsing, and an RNN node's parse, checks, shape rule, claim, compile and
// repack. GNU ld gathers every .text.sorted.* input section into one run at the head of .text,
// so these functions share a few pages instead of sitting beside run-time kernels all over the
// binary.
//
// Why it matters: a read fault on a file mapping maps the whole aligned 64 KiB around it (the
// kernel's fault-around), so each scattered function a load reaches costs a 64 KiB window of
// resident memory. An LSTM node's load used to reach 4-5 windows that an empty model's load
// never touches; now it reaches one. docs/benchmarks.md has the figures.
//
// The binaries are linked with 64 KiB-aligned segments (CMakeLists.txt), so the windows fall on
// the same code in every process; with the 4 KiB default the random load address moved them,
// and a load mapped a window more or less from one run to the next. On Linux 6.18 what a fault
// maps also depends on how the binary's pages were read into the page cache (most likely the
// size of the cached folios): the same binary's RNN load mapped one window beyond an empty
// model's in some cache states and none in others.
//
// What the section does not catch, and how the load path avoids it:
// - a lambda in a marked function: mark the lambda too (below);
// - a template instantiation (std::vector, std::map, shared_ptr control blocks): its code goes
//   wherever the linker keeps the first copy. Keep them off the load path (fill a vector in
//   place rather than from a braced list), or instantiate them beside code every load runs
//   (own_string in runtime/core/tensor_owner.h);
// - a GCC clone of an inline helper (SmallVector::at's .isra clone): keep the helper small
//   enough to inline, its cold part out of line.
// Check with pagemap at the end of a load (docs/benchmarks.md, fifth session).
//
// Operator registration is left where it is on purpose: every session runs it, so the windows
// it touches are resident anyway, and they hold the operators' shape rules and kernel
// factories, which a model's own operators then reach for free. Gathering registration shrank
// the empty model but made each operator of a model cost windows of its own.
//
// The GNU spelling, not [[gnu::section]], because it also applies to a lambda's call operator
// when written after the parameter list; a lambda inside a marked function is not marked by it.
//
// A marked function may also run later (the RNN input checks run on every run); what counts is
// that session creation finds them together. Other compilers and linkers keep the section and
// place it elsewhere; nothing depends on the order.
#if defined(__GNUC__) && defined(__ELF__)
#define RECUR_LOAD_PATH __attribute__((section(".text.sorted.recur_load")))
#else
#define RECUR_LOAD_PATH
#endif
