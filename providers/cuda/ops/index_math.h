// Index arithmetic of cuda-generic's glue kernels, as host/device functions: broadcasting,
// transposes, slices, gathers. The CUDA kernels call them once per output element; the CPU
// tests run the same functions in loops against the reference provider. Parameter structs are
// plain values passed to kernels as arguments (nothing is uploaded), so every launch can be
// recorded in a CUDA graph.
#pragma once

#include <cstdint>

#include "providers/cuda/rnn/rnn_index.h"  // RECUR_HD

namespace recur::cuda::ops {

constexpr int kMaxRank = 8;

// Maps the flat row-major index of an output element to the offset of its source element:
// offset + sum_d idx_d * strides[d] over the output's dimensions `dims`. Strides are in
// elements, 0 along broadcast dimensions, negative for reversed slices.
struct Strided {
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t offset = 0;
  int32_t contiguous = 0;  // source offset == offset + i: no arithmetic needed
};

RECUR_HD inline int64_t source_offset(const Strided& s, int64_t i) {
  if (s.contiguous) return s.offset + i;
  int64_t off = s.offset;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t n = s.dims[d];
    off += (i % n) * s.strides[d];
    i /= n;
  }
  return off;
}

// A gather along one axis: output [outer, count, inner] from data [outer, axis_dim, inner] with
// count indices. Out-of-range indices are clamped (and reported through the run's error flag).
struct GatherIndex {
  int64_t count = 0;     // number of indices
  int64_t inner = 1;     // elements after the axis
  int64_t axis_dim = 0;  // data's size along the axis
};

// The index at position q, made non-negative; `bad` is set when it is out of range, and the
// result then is clamped into range.
RECUR_HD inline int64_t normalized_index(int64_t v, int64_t dim, bool* bad) {
  if (v < 0) v += dim;
  if (v < 0 || v >= dim) {
    *bad = true;
    return v < 0 ? 0 : (dim > 0 ? dim - 1 : 0);
  }
  return v;
}

// Output element i of a gather: the outer row, the index position and the inner offset.
struct GatherPos {
  int64_t outer, q, r;
};
RECUR_HD inline GatherPos gather_pos(const GatherIndex& g, int64_t i) {
  return {i / (g.count * g.inner), (i / g.inner) % g.count, i % g.inner};
}
RECUR_HD inline int64_t gather_source(const GatherIndex& g, const GatherPos& p, int64_t index) {
  return (p.outer * g.axis_dim + index) * g.inner + p.r;
}

// Pad: output position o of dimension d reads kept input index j = o - before[d], repeated
// outside [0, kept[d]) as the mode says (or the fill value, -1 here); kept index j is input
// index lo[d] + j, since negative pads crop first.
enum PadMode : int32_t { kPadConstant = 0, kPadReflect = 1, kPadEdge = 2, kPadWrap = 3 };
struct PadIndex {
  int32_t rank = 0;
  int32_t mode = kPadConstant;
  int64_t out[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};  // the input's, in elements
  int64_t lo[kMaxRank] = {};
  int64_t kept[kMaxRank] = {};
  int64_t before[kMaxRank] = {};
};

// The kept index that position j (relative to the first kept one) repeats, or -1 for the fill.
// Reflect repeats with period 2(m-1), so pads wider than the dimension keep reflecting.
RECUR_HD inline int64_t pad_axis_source(int32_t mode, int64_t j, int64_t m) {
  if (j >= 0 && j < m) return j;
  switch (mode) {
    case kPadEdge:
      return j < 0 ? 0 : m - 1;
    case kPadWrap:
      return ((j % m) + m) % m;
    case kPadReflect: {
      if (m == 1) return 0;
      const int64_t period = 2 * (m - 1);
      j = ((j % period) + period) % period;
      return j < m ? j : period - j;
    }
    default:
      return -1;
  }
}

// The input offset output element i reads, or -1 where it takes the fill value.
RECUR_HD inline int64_t pad_source(const PadIndex& p, int64_t i) {
  int64_t off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const int64_t o = i % p.out[d];
    i /= p.out[d];
    const int64_t s = pad_axis_source(p.mode, o - p.before[d], p.kept[d]);
    if (s < 0) return -1;
    off += (p.lo[d] + s) * p.stride[d];
  }
  return off;
}

// ConvTranspose's col2im as a gather: output element i of [n, m, y...] sums the column entries
// that land on it, plus its channel's bias. The columns are the GEMM's W^T X per group, laid out
// [n, m, taps, x...]. Along spatial axis d output position o is position o + pad[d] of the full
// output, which kernel tap t reaches from input position (o + pad[d] - t * dil[d]) / stride[d]
// where that divides exactly and lies in [0, x[d]).
struct Col2ImArgs {
  int32_t dims = 0;  // spatial axes, 1 to 3
  int32_t has_bias = 0;
  int64_t m = 0, taps = 0, p_in = 0, p_out = 0;
  int64_t x[3] = {}, y[3] = {}, k[3] = {}, stride[3] = {}, dil[3] = {}, pad[3] = {};
};
// Reductions over [outer, reduced, inner] (the reduced axes made contiguous by a transpose
// when they are not adjacent): output element i is (outer, inner).
struct ReduceIndex {
  int64_t outer = 1, reduced = 1, inner = 1;
};
RECUR_HD inline int64_t reduce_base(const ReduceIndex& r, int64_t i) {
  return (i / r.inner) * r.reduced * r.inner + i % r.inner;
}

}  // namespace recur::cuda::ops
