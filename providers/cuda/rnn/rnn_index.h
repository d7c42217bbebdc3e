// Index arithmetic of the small CUDA kernels around cudnnRNNForward. Shared by the kernels
// (rnn_kernels.cu) and by the CPU tests that check the same arithmetic without a GPU.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define RECUR_HD __host__ __device__
#else
#define RECUR_HD
#endif

namespace recur::cuda::rnn_index {

// Row of (step t, batch n) in [T,N,V] (layout 0, sequence-major) or [N,T,V] (layout 1).
RECUR_HD inline int64_t row(int layout, int64_t t, int64_t n, int64_t T, int64_t N) {
  return layout == 0 ? t * N + n : n * T + t;
}

// The step of the source that feeds step t when a sequence of length len is reversed within
// its length; -1 past the length (padding, written as zero).
RECUR_HD inline int64_t reversed_step(int64_t t, int64_t len) { return t < len ? len - 1 - t : -1; }

// Bidirectional output: ONNX Y [T,2,N,H] element `dst` comes from cuDNN's y [T,N,2,H].
RECUR_HD inline int64_t bidir_source(int64_t dst, int64_t N, int64_t H) {
  const int64_t h = dst % H;
  int64_t r = dst / H;
  const int64_t n = r % N;
  r /= N;
  const int64_t d = r % 2;
  const int64_t t = r / 2;
  return ((t * N + n) * 2 + d) * H + h;
}

// States: element `dst` of [B,A,H] comes from [A,B,H] (ONNX layout=1 [N,D,H] <-> cuDNN
// [D,N,H]).
RECUR_HD inline int64_t transpose_source(int64_t dst, int64_t A, int64_t B, int64_t H) {
  const int64_t h = dst % H;
  const int64_t r = dst / H;
  const int64_t a = r % A;
  const int64_t b = r / A;
  return (a * B + b) * H + h;
}

// ONNX Y element `e` of [T,D,N,H] (layout 0) or [N,T,D,H] (layout 1): its step and batch.
RECUR_HD inline void y_step_batch(int64_t e, int layout, int64_t T, int64_t D, int64_t N, int64_t H,
                                  int64_t* t, int64_t* n) {
  const int64_t r = e / H;  // index over [T,D,N] or [N,T,D]
  if (layout == 0) {
    *n = r % N;
    *t = r / (D * N);
  } else {
    *t = (r / D) % T;
    *n = r / (D * T);
  }
}

}  // namespace recur::cuda::rnn_index
