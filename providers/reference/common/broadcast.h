// numpy-style broadcasting for elementwise kernels with any number of inputs.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"

namespace recur::reference {

// The broadcast shape of `shapes`, or an error naming the two that disagree.
Result<Shape> broadcast_shapes(std::span<const Shape> shapes);
inline Result<Shape> broadcast_shapes(std::initializer_list<Shape> shapes) {
  return broadcast_shapes(std::span<const Shape>(shapes.begin(), shapes.size()));
}

// Element strides of `in` aligned to `out`'s rank, 0 along broadcast dimensions.
Shape broadcast_strides(const Shape& in, const Shape& out);

// Calls g(out_index, {in_index...}, {in_step...}, n) for each row of `out`'s innermost dimension
// (n elements; the inputs step by in_step along it, 0 where broadcast), in row-major order. For
// kernels whose inner loop the compiler should see whole.
template <size_t N, class G>
void for_each_broadcast_row(const Shape& out, const std::array<const Shape*, N>& in, G&& g) {
  const int64_t total = shape_numel(out);
  if (total == 0) return;
  const size_t rank = out.size();
  std::array<Shape, N> strides;
  for (size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(*in[k], out);
  const int64_t inner = rank == 0 ? 1 : out[rank - 1];
  std::array<int64_t, N> step{}, off{};
  for (size_t k = 0; k < N && rank > 0; ++k) step[k] = strides[k][rank - 1];
  Shape idx(rank, 0);
  for (int64_t i = 0; i < total; i += inner) {
    g(i, off, step, inner);
    for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (idx[d] < out[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

// Calls f(out_index, {in_index...}) for every element of `out`, in row-major order.
template <size_t N, class F>
void for_each_broadcast(const Shape& out, const std::array<const Shape*, N>& in, F&& f) {
  bool same = true;
  for (size_t k = 0; k < N; ++k) same = same && *in[k] == out;
  if (same) {  // no broadcasting: every index is the output index
    const int64_t total = shape_numel(out);
    std::array<int64_t, N> off{};
    for (int64_t i = 0; i < total; ++i) {
      off.fill(i);
      f(i, off);
    }
    return;
  }
  // The innermost dimension is a loop of its own, each input stepping by its stride there (0
  // where it is broadcast): a bias added along the last axis then costs one call of f per
  // element instead of an odometer step over every dimension.
  for_each_broadcast_row<N>(out, in,
                            [&](int64_t i, const std::array<int64_t, N>& off,
                                const std::array<int64_t, N>& step, int64_t n) {
                              std::array<int64_t, N> at = off;
                              for (int64_t j = 0; j < n; ++j) {
                                f(i + j, at);
                                for (size_t k = 0; k < N; ++k) at[k] += step[k];
                              }
                            });
}

}  // namespace recur::reference
