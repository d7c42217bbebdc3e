// Launchers for the data-movement kernels around cudnnRNNForward. Elements are moved as
// 2- or 4-byte words, so one kernel serves float16 and float32. Sequence lengths travel as
// kernel arguments in chunks of batches: nothing is uploaded.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace recur::cuda {

// dst[t,n,:] = src[len_n-1-t, n, :] for t < len_n, else 0. `lens` is host memory.
cudaError_t launch_reverse_sequences(const void* src, void* dst, size_t elem_size, int layout,
                                     int64_t T, int64_t N, int64_t V, const int32_t* lens,
                                     cudaStream_t stream);
// cuDNN y [T,N,2,H] -> ONNX Y [T,2,N,H].
cudaError_t launch_bidir_to_onnx(const void* src, void* dst, size_t elem_size, int64_t T, int64_t N,
                                 int64_t H, cudaStream_t stream);
// [A,B,H] -> [B,A,H].
cudaError_t launch_transpose_states(const void* src, void* dst, size_t elem_size, int64_t A,
                                    int64_t B, int64_t H, cudaStream_t stream);
// Zeroes ONNX Y ([T,D,N,H] or [N,T,D,H]) at steps t >= lens[n]. `lens` is host memory.
cudaError_t launch_mask_y(void* y, size_t elem_size, int layout, int64_t T, int64_t D, int64_t N,
                          int64_t H, const int32_t* lens, cudaStream_t stream);

}  // namespace recur::cuda
