// Launchers of cuda-generic's glue kernels (ops/elementwise.cu, movement.cu, reduce.cu). Each
// is a grid-stride loop around a function of element_fns.h; arguments travel by value, so a
// launch never uploads anything and can be recorded in a CUDA graph. Types are chosen at run
// time from the DType (float16 computes in float). Errors on bad data (an index out of range,
// an integer division by zero) set the run's error flag to `site`, checked after the run.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "providers/cuda/ops/element_fns.h"
#include "recur/dtype.h"

namespace recur::cuda::ops {

// Arithmetic writes `t`; comparisons and logic (is_comparison(op)) write bool.
cudaError_t launch_binary(DType t, const BinaryArgs& g, const void* a, const void* b, void* y,
                          int64_t n, int32_t* flag, int32_t site, cudaStream_t s);
// Float types for every UnaryOp; int32/int64 for Neg, Abs, Sign; bool for Not. alpha and beta
// are double for Clip's float64 bounds.
cudaError_t launch_unary(DType t, int32_t op, double alpha, double beta, const void* x, void* y,
                         int64_t n, cudaStream_t s);
cudaError_t launch_where(size_t elem, const WhereArgs& g, const bool* c, const void* x,
                         const void* y, void* out, int64_t n, cudaStream_t s);
// scale and shift hold `channels` values of the compute type (double for float64, else float).
cudaError_t launch_channel_affine(DType t, const void* x, const void* scale, const void* shift,
                                  void* y, int64_t channels, int64_t inner, int64_t n,
                                  cudaStream_t s);
cudaError_t launch_cast(int32_t from, const void* src, int32_t to, void* dst, int64_t n,
                        cudaStream_t s);

cudaError_t launch_strided_copy(size_t elem, const Strided& g, const void* src, void* dst,
                                int64_t n, cudaStream_t s);
// `fill` holds the constant's bits in its low `elem` bytes.
cudaError_t launch_pad(size_t elem, const PadIndex& g, const void* src, void* dst, uint64_t fill,
                       int64_t n, cudaStream_t s);
cudaError_t launch_gather(size_t elem, bool index64, const GatherIndex& g, const void* data,
                          const void* indices, void* out, int64_t n, int32_t* flag, int32_t site,
                          cudaStream_t s);
cudaError_t launch_scatter(size_t elem, bool index64, const ScatterArgs& g, const void* indices,
                           const void* updates, void* out, int64_t n, int32_t* flag, int32_t site,
                           cudaStream_t s);
cudaError_t launch_fill(size_t elem, uint64_t bits, void* dst, int64_t n, cudaStream_t s);
// float32/float64 use start/delta; int32/int64 use istart/idelta.
cudaError_t launch_range(DType t, double start, double delta, long long istart, long long idelta,
                         void* out, int64_t n, cudaStream_t s);

cudaError_t launch_reduce(DType t, int32_t op, const ReduceIndex& r, const void* x, void* y,
                          int64_t n_out, cudaStream_t s);
cudaError_t launch_arg(DType t, bool is_max, bool last, const ReduceIndex& r, const void* x,
                       int64_t* y, int64_t n_out, cudaStream_t s);
cudaError_t launch_softmax(DType t, bool log_softmax, const ReduceIndex& r, const void* x, void* y,
                           int64_t rows, cudaStream_t s);
cudaError_t launch_layer_norm(DType t, const LayerNormArgs& g, const void* x, const void* scale,
                              const void* bias, void* y, cudaStream_t s);
// ConvTranspose's columns summed into Y (col2im_element); bias may be null.
cudaError_t launch_col2im(DType t, const Col2ImArgs& a, const void* cols, const void* bias, void* y,
                          int64_t n, cudaStream_t s);
cudaError_t launch_top_k(DType t, const ReduceIndex& r, int64_t K, bool largest, const void* x,
                         void* values, int64_t* indices, int64_t n, cudaStream_t s);

}  // namespace recur::cuda::ops
