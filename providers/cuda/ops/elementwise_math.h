// The per-element math of cuda-generic's elementwise kernels (host/device, shared with the CPU
// tests). The operator is a run-time code, so one kernel per type serves every operator: the
// branch is uniform across a launch, and nvcc builds a handful of kernels instead of hundreds.
#pragma once

#include <math.h>

#include <cstdint>

#include "providers/cuda/ops/index_math.h"

namespace recur::cuda::ops {

enum BinaryOp : int32_t {
  kAdd = 0,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kMod,   // integer Mod (fmod=0): the sign of the divisor, as Python
  kFmod,  // fmod=1: the sign of the dividend, as C
  kPRelu,
  // Comparisons and logic write bool.
  kEqual,
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor,
};
RECUR_HD inline bool is_comparison(int32_t op) { return op >= kEqual; }

enum UnaryOp : int32_t {
  kRelu = 0,
  kTanh,
  kSigmoid,
  kExp,
  kLog,
  kNeg,
  kAbs,
  kSqrt,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,
  kErf,
  kSin,
  kCos,
  kSoftplus,
  kSoftsign,
  kElu,
  kLeakyRelu,
  kHardSigmoid,
  kSelu,
  kClip,
  kSign,
  kThresholdedRelu,
  kHardSwish,
  kNot,
  kCelu,
  kGeluErf,
  kGeluTanh,
};

// Error codes an elementwise launch can raise through the run's error flag.
enum ElementwiseError : int32_t { kNoError = 0, kIntegerDivisionByZero = 1 };

RECUR_HD inline float fm_floor(float x) { return floorf(x); }
RECUR_HD inline double fm_floor(double x) { return floor(x); }

template <class C>
RECUR_HD C unary_apply(int32_t op, C x, double alpha, double beta) {
  const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
  const C zero(0), one(1);
  switch (op) {
    // The comparisons are ordered so that a NaN comes out NaN, as in the reference.
    case kRelu:
      return x < zero ? zero : x;
    case kTanh:
      return tanh(x);
    case kSigmoid:
      return one / (one + exp(-x));
    case kExp:
      return exp(x);
    case kLog:
      return log(x);
    case kNeg:
      return -x;
    case kAbs:  // +0 for -0
      return x < zero ? -x : (x == zero ? zero : x);
    case kSqrt:
      return sqrt(x);
    case kReciprocal:
      return one / x;
    case kFloor:
      return floor(x);
    case kCeil:
      return ceil(x);
    case kRound:
      return rint(x);  // halves to even, as ONNX Round
    case kErf:
      return erf(x);
    case kSin:
      return sin(x);
    case kCos:
      return cos(x);
    case kSoftplus:
      return x > zero ? x + log1p(exp(-x)) : log1p(exp(x));
    case kSoftsign:
      return x / (one + (x < zero ? -x : x));
    case kElu:
      return x >= zero ? x : a * expm1(x);
    case kLeakyRelu:
      return x >= zero ? x : a * x;
    case kHardSigmoid: {
      const C v = a * x + b;
      return v < zero ? zero : (v > one ? one : v);
    }
    case kSelu:  // alpha, gamma (in beta); expm1 keeps -0, as the reference's
      return x > zero ? b * x : b * a * expm1(x);
    case kClip: {  // min in alpha, max in beta
      // min(max(x, lo), hi), so min > max gives max; NaN in x or a bound propagates (numpy.clip).
      const C v = x != x ? x : (a != a ? a : (x < a ? a : x));
      return v != v ? v : (b != b ? b : (b < v ? b : v));
    }
    case kSign:
      return x > zero ? one : (x < zero ? -one : (x == zero ? zero : x));  // +0 for -0 (numpy)
    case kThresholdedRelu:
      return x <= a ? zero : x;
    case kHardSwish: {
      const C v = x / C(6) + C(0.5);
      return x * (v < zero ? zero : (v > one ? one : v));
    }
    case kCelu:  // max(0, x) + min(0, alpha expm1(x / alpha)), -0 kept, as the reference's
      return x > zero ? x : a * expm1(x / a);
    case kGeluErf:
      return C(0.5) * x * (one + erf(x * C(0.70710678118654752440)));
    case kGeluTanh:
      return C(0.5) * x * (one + tanh(C(0.79788456080286535588) * (x + C(0.044715) * x * x * x)));
  }
  return x;
}

// Integer unary ops (Neg, Abs, Sign); negation wraps.
template <class I>
RECUR_HD I unary_int(int32_t op, I x) {
  using U = unsigned long long;
  switch (op) {
    case kNeg:
      return static_cast<I>(U(0) - static_cast<U>(x));
    case kAbs:
      return x < 0 ? static_cast<I>(U(0) - static_cast<U>(x)) : x;
    case kSign:
      return static_cast<I>(x > 0 ? 1 : (x < 0 ? -1 : 0));
  }
  return x;
}

template <class C>
RECUR_HD C float_binary(int32_t op, C x, C y) {
  switch (op) {
    case kAdd:
      return x + y;
    case kSub:
      return x - y;
    case kMul:
      return x * y;
    case kDiv:
      return x / y;
    case kPow:
      // The exponents of STFT magnitudes; y is the same in every thread, so the branch is free.
      if (y == C(2)) return x * x;
      if (y == C(0.5)) return x == -INFINITY ? C(INFINITY) : sqrt(x) + C(0);  // pow's -0, -inf
      return pow(x, y);
    case kMax:
      return x != x ? x : (y != y ? y : (x > y ? x : y));  // NaN propagates
    case kMin:
      return x != x ? x : (y != y ? y : (x < y ? x : y));
    case kMod:
    case kFmod:
      return fmod(x, y);
    case kPRelu:
      return x < C(0) ? x * y : x;
  }
  return x;
}

// Integer arithmetic wraps (computed unsigned); division and modulo by zero give 0 and set
// *err.
template <class I>
RECUR_HD I int_binary(int32_t op, I x, I y, int32_t* err) {
  using U = unsigned long long;
  switch (op) {
    case kAdd:
      return static_cast<I>(static_cast<U>(x) + static_cast<U>(y));
    case kSub:
      return static_cast<I>(static_cast<U>(x) - static_cast<U>(y));
    case kMul:
      return static_cast<I>(static_cast<U>(x) * static_cast<U>(y));
    case kDiv:
      if (y == 0) {
        *err = kIntegerDivisionByZero;
        return 0;
      }
      if (y == -1) return static_cast<I>(U(0) - static_cast<U>(x));  // MIN / -1 wraps
      return static_cast<I>(x / y);
    case kMod:
    case kFmod: {
      if (y == 0) {
        *err = kIntegerDivisionByZero;
        return 0;
      }
      if (y == -1) return 0;
      I r = static_cast<I>(x % y);
      if (op == kMod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<I>(r + y);
      return r;
    }
    case kPow: {
      if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);
      U r = 1, base = static_cast<U>(x);
      for (I e = y; e > 0; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
      }
      return static_cast<I>(r);
    }
    case kMax:
      return x > y ? x : y;
    case kMin:
      return x < y ? x : y;
    case kPRelu:
      return x < 0 ? static_cast<I>(static_cast<U>(x) * static_cast<U>(y)) : x;
  }
  return x;
}

template <class C>
RECUR_HD bool compare(int32_t op, C x, C y) {
  switch (op) {
    case kEqual:
      return x == y;
    case kLess:
      return x < y;
    case kLessOrEqual:
      return x <= y;
    case kGreater:
      return x > y;
    case kGreaterOrEqual:
      return x >= y;
    case kAnd:
      return (x != C(0)) && (y != C(0));
    case kOr:
      return (x != C(0)) || (y != C(0));
    case kXor:
      return (x != C(0)) != (y != C(0));
  }
  return false;
}

// Parameters of one binary launch: A and B read through broadcasting into the output.
struct BinaryArgs {
  int32_t op = kAdd;
  Strided a, b;
};

}  // namespace recur::cuda::ops
