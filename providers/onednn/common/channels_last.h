// float32 NCHW <-> NHWC copies for the convolutions that oneDNN runs channels-last
// (layout_prim.h) and Transpose: per image a [C, HW] <-> [HW, C] transpose in tiles held in
// registers. oneDNN 2.6's reorder ran them at about 5 GB/s (a [64, 32, 32, 128] conv output,
// 33.5 MB, took 13 ms at 2 threads); they were a third of an OCR line reader's time at batch 64.
#pragma once

#include <cstdint>

namespace recur::onednn {

// y[p][c][r] = x[p][r][c] for `planes` planes of [rows, cols] (NHWC -> NCHW: rows = HW,
// cols = C; NCHW -> NHWC: rows = C, cols = HW), on up to `threads` threads (fewer while other
// processes hold cores, where `shrink`). 16 x 16 tiles with AVX-512, 8 x 8 with AVX2, plain
// loops on other x86-64 processors.
void transpose_planes(const float* x, float* y, int64_t planes, int64_t rows, int64_t cols,
                      int threads, bool shrink);

}  // namespace recur::onednn
