// Small 1-D convolutions (the vocoders' and voice-activity detectors' stacks: 8 to 64 channels,
// kernels of 3 to 7, a few hundred steps) on recur's own AVX-512 loop, vectorized over time:
// each output channel's 16 consecutive steps are one vector, so every multiply-add is a
// broadcast weight times a contiguous run of the input, with no patch built per step. The
// input is copied once per batch row into a zero-padded buffer split into `stride` phases,
// which makes the runs contiguous for any stride and dilation. A oneDNN call costs more than
// such a convolution does.
#pragma once

#include <cstdint>
#include <optional>

namespace recur::onednn {

struct SmallConv1d {
  int64_t C = 0, M = 0, G = 1;  // input and output channels, groups
  int64_t k = 0, stride = 1, dilation = 1, pad_l = 0;
  int64_t Ti = 0, To = 0;  // input and output steps
  // The activation applied as each output is written: none, max(x, 0) with `alpha` times x
  // below 0 (Relu, LeakyRelu), the logistic function, or x max(0, min(1, x / 6 + 1/2)).
  enum class Post { kNone, kRelu, kSigmoid, kHardSwish } post = Post::kNone;
  float alpha = 0.0f;
  // Elements between two output channels' rows of y (0: To, a [M, To] output).
  int64_t y_stride = 0;

  // Floats of scratch run() needs: the padded, phase-split input of one batch row.
  int64_t scratch_floats() const;
  // What the loop costs, in vector multiply-adds: those of the convolution, the lanes past
  // To in each row's last vector included, and the copy of the input into the phases (a
  // call's worth, 16, per channel and phase, measured on a 128-channel, one-step convolution,
  // where it is all the work).
  double cost() const;
};

// y[n][m][t] = post(b[m] + sum over c in m's group, j < k of
//   w[m][c][j] * x[n][c][t * stride + j * dilation - pad_l]), x zero outside [0, Ti).
// x: [N, C, Ti], w: [M, C / G, k] (ONNX's layout), b: [M] or null, y: [N, M, To]. Needs
// AVX-512F (avx512::have_avx512()).
void run_small_conv1d(const SmallConv1d& p, int64_t N, const float* x, const float* w,
                      const float* b, float* y, float* scratch);

// One batch row whose input channel c is the row at rows[c] (Ti elements; null: zeros), so
// that a 2-D convolution runs as one 1-D convolution per output row: channel (c, ky) is the
// input row that kernel row ky of channel c reads, the filter [M, C, kh, kw] read as
// [M, C kh, kw], and y the output row, y_stride apart per output channel.
void run_small_conv1d_rows(const SmallConv1d& p, const float* const* rows, const float* w,
                           const float* b, float* y, float* scratch);

// A 2-D depthwise convolution (one input and one output channel a group: MobileNet's k x k
// layers) in NCHW, each output row's 16 consecutive positions a vector, every multiply-add a
// broadcast weight times a contiguous run of a zero-padded, stride-phase-split copy of the
// channel's rows (made once per channel). oneDNN's depthwise convolution wants NHWC, and its
// reorder each way cost more than the convolution.
struct DepthwiseConv2d {
  static constexpr int64_t kMaxStride = 16, kMaxKernel = 64;  // horizontally; more: oneDNN
  int64_t C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pad_t = 0, pad_l = 0;
  SmallConv1d::Post post = SmallConv1d::Post::kNone;
  float alpha = 0.0f;

  // Floats of scratch run_depthwise_conv2d needs: one channel's rows, padded and phase-split.
  int64_t scratch_floats() const;
};

// y[n][c][oy][ox] = post(b[c] + sum over ky, kx of w[c][ky][kx] *
//   x[n][c][oy sh + ky dh - pad_t][ox sw + kx dw - pad_l]), x zero outside the image.
// x: [N, C, H, W], w: [C, 1, kh, kw], b: [C] or null, y: [N, C, OH, OW]; channels [c0, c1)
// of every image (threads take a part each). Needs AVX-512F.
void run_depthwise_conv2d(const DepthwiseConv2d& p, int64_t N, const float* x, const float* w,
                          const float* b, float* y, float* scratch, int64_t c0, int64_t c1);

}  // namespace recur::onednn
