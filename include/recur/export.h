// RECUR_API marks what librecur.so exports: the library is compiled with hidden visibility
// so that its internals (and the libraries it links: protobuf, oneDNN) stay private to it.
#pragma once

#ifndef RECUR_API
#if defined(__GNUC__) || defined(__clang__)
#define RECUR_API __attribute__((visibility("default")))
#else
#define RECUR_API
#endif
#endif
