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
// never touches; docs/benchmarks.md has the figures.
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
