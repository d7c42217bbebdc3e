// Host-side planning of cuda-generic's glue kernels: output shapes and the index parameters
// (index_math.h) each launch takes. Pure C++ without CUDA types, so the CPU tests check every
// plan by running index_math.h's functions in loops against the reference provider.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "providers/cuda/ops/index_math.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/conv_transpose_shape.h"
#include "runtime/graph/einsum_plan.h"

namespace recur {
struct Node;
}

namespace recur::cuda::ops {

// A strided view with adjacent dimensions merged where the strides allow it, and dimensions of
// size 1 dropped; fails when more than kMaxRank dimensions remain.
Result<Strided> make_strided(const Shape& dims, const std::vector<int64_t>& strides,
                             int64_t offset);

// numpy broadcasting: the shape of `shapes` together, or an error naming the mismatch.
Result<Shape> broadcast_shape(const std::vector<Shape>& shapes);
// `in` read as `out` (in broadcasts to out).
Result<Strided> broadcast_strided(const Shape& in, const Shape& out);

// Transpose: output dimension i is input dimension perm[i] (empty perm: reversed).
Result<Strided> transpose_strided(const Shape& in, std::vector<int64_t> perm, Shape* out);

// Slice (opset 10+ inputs; earlier attributes map onto them), numpy clamping, any steps.
Result<Strided> slice_strided(const Shape& in, const std::vector<int64_t>& starts,
                              const std::vector<int64_t>& ends,
                              const std::optional<std::vector<int64_t>>& axes,
                              const std::optional<std::vector<int64_t>>& steps, Shape* out);

// Pad (opset 11+ inputs; the attributes before map onto them): `pads` holds the begins, then the
// ends, of `axes` (every axis when absent); negative pads crop. Errors as the reference
// provider's: a wrong count of pads, a crop beyond a dimension, nothing left to repeat.
Result<PadIndex> pad_plan(const Shape& in, const std::vector<int64_t>& pads,
                          const std::optional<std::vector<int64_t>>& axes, int32_t mode,
                          Shape* out);

// Concat and Split as row-block copies: `outer` rows of `width` elements, from `src_offset`
// with pitch `src_pitch` to `dst_offset` with pitch `dst_pitch` (cudaMemcpy2DAsync's shape).
struct BlockCopy {
  int64_t outer = 0, width = 0;
  int64_t src_offset = 0, src_pitch = 0;
  int64_t dst_offset = 0, dst_pitch = 0;
};
Result<std::vector<BlockCopy>> concat_blocks(const std::vector<Shape>& inputs, int64_t axis,
                                             Shape* out);
Result<std::vector<BlockCopy>> split_blocks(const Shape& in, int64_t axis,
                                            const std::vector<int64_t>& sizes,
                                            std::vector<Shape>* outs);

// Flatten's output shape: [prod(in[:axis]), prod(in[axis:])], axis in [-rank, rank] (negative
// adds rank); an error when a product overflows (an empty tensor's other side).
Result<Shape> flatten_shape(const Shape& in, int64_t axis);

// Gather along `axis`: out = data[:axis] + indices + data[axis+1:].
Result<GatherIndex> gather_plan(const Shape& data, const Shape& indices, int64_t axis, Shape* out,
                                int64_t* outer);

// A reduction over `axes` (all axes when empty and not noop): the input is read as
// [outer, reduced, inner]; when the reduced axes are not adjacent, `perm` (non-empty) is the
// transpose that makes them the last ones first.
struct ReducePlan {
  std::vector<int64_t> perm;  // empty: no transpose needed
  ReduceIndex index;
  Shape out;              // with keepdims applied
  bool identity = false;  // noop_with_empty_axes and no axes: the input unchanged
};
Result<ReducePlan> reduce_plan(const Shape& in, std::vector<int64_t> axes, bool keepdims,
                               bool noop_with_empty_axes);

// GlobalAveragePool as a reduction: every spatial axis of [N, C, spatial...], kept as 1. A rank-2
// input has none, and reduce_plan with noop_with_empty_axes returns it unchanged.
inline std::vector<int64_t> global_pool_axes(int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  return axes;
}

// [outer, axis_dim, inner] around `axis`: Softmax (opset 13+), TopK, ArgMax...
ReduceIndex around_axis(const Shape& in, int64_t axis);

// MatMul's numpy semantics: A [..., M, K] x B [..., K, N] with broadcast batch dimensions.
// Each of the `batch` products uses A at a_offsets[b] and B at b_offsets[b]; when the offsets
// step evenly, a_stride/b_stride give them (one strided-batched GEMM).
struct MatMulPlan {
  int64_t M = 0, N = 0, K = 0, batch = 1;
  Shape out;
  std::vector<int64_t> a_offsets, b_offsets;
  bool strided = true;
  int64_t a_stride = 0, b_stride = 0;
};
Result<MatMulPlan> matmul_plan(const Shape& a, const Shape& b);

// Einsum of two operands (runtime/graph/einsum_plan.h) as one strided-batched GEMM over dense
// operands: A read into [bt, mt, kt] and B into [bt, kt, nt] through their labels' strides
// (diagonals and broadcasting included), the product written dense as [bt, mt, nt], and `y`
// reading the output, in its own order, from that product. A view that is `contiguous` is the
// identity: its copy is skipped. Nothing is planned past the shapes when the output is empty or
// kt is 0 (the output is zeros).
struct EinsumGpuPlan {
  Shape out;
  int64_t bt = 0, mt = 0, nt = 0, kt = 0;
  Strided a, b, y;
};
Result<EinsumGpuPlan> einsum_gpu_plan(const einsum::Parsed& p, const Shape& sa, const Shape& sb);

// ConvTranspose as cuBLAS's W^T X per batch and group into columns [n, m, taps, x...], then
// col2im_element over Y: the gather's parameters for a resolved geometry (1 to 3 spatial axes).
Result<Col2ImArgs> col2im_plan(const ConvTransposeShape& s, bool has_bias);

// Clip's bounds: the min and max attributes before opset 11, the optional scalar inputs `lo` and
// `hi` (read on the host) from opset 11. In double, so that float64 bounds keep their precision;
// an absent bound is infinite (not FLT_MAX, which would clamp infinities and large float64s).
struct ClipBounds {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
};
Result<ClipBounds> clip_bounds(const Node& node, std::optional<double> lo,
                               std::optional<double> hi);

// Negative axes made non-negative; an error names `what` when out of range.
Result<int64_t> axis_in(int64_t axis, int64_t rank, const std::string& what);

}  // namespace recur::cuda::ops
