// Helpers shared by the quantisation kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "providers/reference/nn/nn_util.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"

namespace recur::reference {

// The values of a 4-, 8- or 16-bit integer or int32 tensor as int32.
Result<std::vector<int32_t>> read_quantized(const Tensor& t, const std::string& what);
// The values of a float32, float16 or bfloat16 tensor as float.
Result<std::vector<float>> read_float32(const Tensor& t, const std::string& what);
// The values of a float, float8 or read_quantized() tensor as float.
Result<std::vector<float>> read_as_float(const Tensor& t, const std::string& what);

// Rounds half to even and saturates to Q's range.
template <class Q>
Q saturate_round(float v) {
  const float r = std::nearbyint(v);
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  if (!(r >= lo)) return std::numeric_limits<Q>::lowest();  // NaN too
  if (r > hi) return std::numeric_limits<Q>::max();
  return static_cast<Q>(r);
}

// Scale and zero point applied along one axis (or to the whole tensor): element i of a tensor
// viewed as [outer, len, inner] uses index (i / inner) % len. Blocked (block > 0): x is
// [outer, dim, inner], the scale [outer, len, inner] with len = ceil(dim / block).
struct AxisQuant {
  std::vector<float> scale;
  std::vector<float> zero_point;
  int64_t len = 1, inner = 1, block = 0, dim = 1;
  size_t index(int64_t i) const {
    if (block == 0) return static_cast<size_t>((i / inner) % len);
    const int64_t o = i / (dim * inner), d = (i / inner) % dim, in = i % inner;
    return static_cast<size_t>((o * len + d / block) * inner + in);
  }
};
// Per-tensor when scale has one element, per-axis when it is 1-D with x.shape[axis] values,
// blocked when block_size > 0. zero_point, if given, must have the shape of scale.
Result<AxisQuant> axis_quant(const Tensor& scale, const Tensor* zero_point, const Shape& x,
                             int64_t axis, int64_t block_size = 0);

// A zero point that applies per row (or column) of a matrix operand: one value, or one per
// row, or one per (batch, row).
Result<std::vector<int32_t>> matrix_zero_point(const Tensor* zp, int64_t rows, int64_t batches,
                                               const std::string& what);

// The int32 products sum_k (a - a_zp)(b - b_zp) with numpy matmul broadcasting; a_zp is per
// tensor or per row of A, b_zp per tensor or per column of B.
struct QuantMatMul {
  MatMulShapes shapes;
  std::vector<int32_t> acc;  // shapes.y's elements
};
Result<QuantMatMul> quantized_matmul(const Tensor& a, const Tensor* a_zp, const Tensor& b,
                                     const Tensor* b_zp);

// The int32 convolution of (x - x_zp) and (w - w_zp): x_zp per tensor, w_zp per tensor or
// per output channel. Padding contributes zero (x's zero point).
struct QuantConv {
  ConvShapes shapes;
  std::vector<int32_t> acc;  // shapes.y's elements
};
Result<QuantConv> quantized_conv(const WindowAttrs& attrs, int64_t group, const Tensor& x,
                                 const Tensor* x_zp, const Tensor& w, const Tensor* w_zp);

}  // namespace recur::reference
