// Where the code that creates a session lives in the binary.
#pragma once

// RECUR_LOAD_PATH marks a function that session creation runs: an operator's registration, and
// the parse, checks, shape rule, claim, compile and repack of an RNN node. GNU ld gathers every
// .text.sorted.* input section into one run at the head of .text, so these functions share a
// few pages instead of sitting next to their operators' run-time kernels all over the binary.
//
// Why it matters: a read fault on a file mapping maps the whole aligned 64 KiB around it (the
// kernel's fault-around), so each scattered function a load touched cost a 64 KiB window of
// resident memory. Registration alone touched some 50 windows (3 MiB) for every session, and an
// RNN node's load 4-5 more than an Identity node's. docs/benchmarks.md has the figures.
//
// A marked function may also run later (the RNN input checks run on every run); what counts is
// that session creation finds them together. Other compilers and linkers keep the section and
// place it elsewhere; nothing depends on the order.
#if defined(__GNUC__) && defined(__ELF__)
#define RECUR_LOAD_PATH [[gnu::section(".text.sorted.recur_load")]]
#else
#define RECUR_LOAD_PATH
#endif
