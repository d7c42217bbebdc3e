// 2-D pooling of small NCHW tensors (the CNN front ends of OCR and speech models: tens of
// channels, tens of rows and columns) on recur's own AVX-512 loop, vectorized along the output
// row: oneDNN's pooling took 17.6 us for a CRNN's 2x2 MaxPool of [2, 32, 16, 40] and 6.5 us for
// its AveragePool of [2, 64, 8, 20], most of it per call. Each output row first reduces its
// kernel rows into a row buffer padded with the fill value (-inf or 0), then each vector of 16
// outputs reduces its taps from that row: contiguous loads for stride 1, two loads and a
// permute taking every other element for stride 2, a gather for larger strides. Dilated
// windows take every dh-th row and every dw-th tap of the row (oneDNN 2.6 pools them on its
// reference implementation: a 3x3 max pool of dilation 2 over [2, 16, 40, 40] took 8.3 ms).
#pragma once

#include <cstdint>
#include <vector>

namespace recur::onednn {

struct SmallPool2d {
  bool max = true;
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;  // dilations as ONNX counts them
  int64_t pad_t = 0, pad_l = 0;
  // Averages: 1 / the taps each output divides by, [OH * OW]: those inside the input, or with
  // count_include_pad those inside the padded input (the extra cells of ceil_mode excluded).
  std::vector<float> inv_count;

  // The floats of the row buffer one output row is reduced into; the loop takes planes whose
  // buffer fits kMaxRow (on the stack).
  static constexpr int64_t kMaxRow = 2048;
  int64_t row_floats() const;

  // The plan for one input shape; `pad_b` and `pad_r` are the model's pads (for the counts).
  static SmallPool2d make(bool max, bool include_pad, int64_t H, int64_t W, int64_t OH, int64_t OW,
                          int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pad_t,
                          int64_t pad_l, int64_t pad_b, int64_t pad_r, int64_t dh = 1,
                          int64_t dw = 1);
};

// y[p][oy][ox] over planes p of x [planes, H, W]: the largest tap (a NaN is never larger, and a
// window of no tap or only NaNs gives -inf, as the reference provider's MaxPool), or the
// taps' sum times inv_count. Needs AVX-512F (avx512::have_avx512()).
void run_small_pool2d(const SmallPool2d& p, int64_t planes, const float* x, float* y);

// The same over planes of channel-blocked X [planes, H, W, 16] (runtime/graph/blocked.h; a
// MaxPool or AveragePool of kernel [kh, kw, 1] over [N, C/16, H, W, 16]), each output a vector
// of 16 channels: y [planes, OH, OW, 16]. Needs AVX-512F.
void run_blocked_pool2d(const SmallPool2d& p, int64_t planes, const float* x, float* y);

// GlobalMaxPool and GlobalAveragePool over planes of `size` contiguous elements.
void run_global_pool(bool max, int64_t planes, int64_t size, const float* x, float* y);

}  // namespace recur::onednn
