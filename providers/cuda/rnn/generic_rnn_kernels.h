// Launchers of the cuda-generic RNN's CUDA kernels (generic_rnn_kernels.cu): one thread per
// element, each calling the host/device functions of generic_cell.h. Instantiated for
// (T, C) = (float, float), (double, double) and (__half, float).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "providers/cuda/rnn/generic_cell.h"
#include "providers/cuda/rnn/generic_rnn_plan.h"

namespace recur::cuda {

template <class T, class C>
cudaError_t launch_rnn_init(const cell::CellParams& p, const T* h0, const T* c0, C* h, C* c,
                            cudaStream_t stream);
template <class T, class C>
cudaError_t launch_rnn_step(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, int64_t s,
                            int phase, cudaStream_t stream);
// Every step in one cooperative launch, as `g` divides the work (generic_rnn_plan.h); h2 is
// the second state buffer. `dry`: only whether the device can run g.blocks blocks of it at once
// (cudaErrorCooperativeLaunchTooLarge if not).
template <class T, class C>
cudaError_t launch_rnn_grid(const cell::CellParams& p, const cell::StepBuffers<T, C>& b, const C* r,
                            C* h2, const GridShape& g, cudaStream_t stream, bool dry);
template <class T, class C>
cudaError_t launch_rnn_final(const cell::CellParams& p, const int32_t* lens, const C* h, const C* c,
                             T* yh, T* yc, cudaStream_t stream);
// B [D][2*G*H] (ONNX) -> bias [D][G*H] and rbh [D][H] (cell::pack_bias_element).
template <class T, class C>
cudaError_t launch_rnn_pack_bias(const cell::CellParams& p, const T* b, C* bias, C* rbh,
                                 cudaStream_t stream);
// Sets *flag to `site` (if clear) when a sequence length is outside [0, T]; the cell functions
// clamp such lengths, and the run then reports the error.
cudaError_t launch_rnn_check_lengths(const int32_t* lens, int64_t N, int64_t T, int32_t* flag,
                                     int32_t site, cudaStream_t stream);
// dst[i] = C(src[i]) for i < n.
template <class T, class C>
cudaError_t launch_convert(const T* src, C* dst, int64_t n, cudaStream_t stream);

}  // namespace recur::cuda
