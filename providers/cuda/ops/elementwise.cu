// Elementwise kernels: binary with broadcasting, unary, Where, per-channel affine, Cast.
#include "providers/cuda/ops/kernel_util.cuh"
#include "providers/cuda/ops/launch.h"

namespace recur::cuda::ops {

namespace {

template <class T, class C>
__global__ void binary_float_kernel(BinaryArgs g, const T* a, const T* b, T* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { binary_float_element<T, C>(g, a, b, y, i); }
}

template <class I>
__global__ void binary_int_kernel(BinaryArgs g, const I* a, const I* b, I* y, int64_t n,
                                  int32_t* flag, int32_t site) {
  RECUR_FOR_EACH(i, n) { binary_int_element<I>(g, a, b, y, i, flag, site); }
}

template <class T, class C>
__global__ void compare_kernel(BinaryArgs g, const T* a, const T* b, bool* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { compare_element<T, C>(g, a, b, y, i); }
}

template <class T, class C>
__global__ void unary_float_kernel(int32_t op, double alpha, double beta, const T* x, T* y,
                                   int64_t n) {
  RECUR_FOR_EACH(i, n) { unary_float_element<T, C>(op, alpha, beta, x, y, i); }
}

template <class I>
__global__ void unary_int_kernel(int32_t op, const I* x, I* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { y[i] = unary_int<I>(op, x[i]); }
}

__global__ void not_kernel(const bool* x, bool* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { y[i] = !x[i]; }
}

template <class W>
__global__ void where_kernel(WhereArgs g, const bool* c, const W* x, const W* y, W* out,
                             int64_t n) {
  RECUR_FOR_EACH(i, n) { where_element<W>(g, c, x, y, out, i); }
}

template <class T, class C>
__global__ void affine_kernel(const T* x, const C* scale, const C* shift, T* y, int64_t channels,
                              int64_t inner, int64_t n) {
  RECUR_FOR_EACH(i, n) { channel_affine_element<T, C>(x, scale, shift, y, channels, inner, i); }
}

__global__ void cast_kernel(int32_t from, const void* src, int32_t to, void* dst, int64_t n) {
  RECUR_FOR_EACH(i, n) { cast_store<__half>(dst, to, i, cast_load<__half>(src, from, i)); }
}

template <class T, class C>
void binary_typed(const BinaryArgs& g, const void* a, const void* b, void* y, int64_t n,
                  cudaStream_t s) {
  if (is_comparison(g.op)) {
    RECUR_LAUNCH(n, s, (compare_kernel<T, C>), g, static_cast<const T*>(a),
                 static_cast<const T*>(b), static_cast<bool*>(y), n);
  } else {
    RECUR_LAUNCH(n, s, (binary_float_kernel<T, C>), g, static_cast<const T*>(a),
                 static_cast<const T*>(b), static_cast<T*>(y), n);
  }
}

template <class I>
void binary_int_typed(const BinaryArgs& g, const void* a, const void* b, void* y, int64_t n,
                      int32_t* flag, int32_t site, cudaStream_t s) {
  if (is_comparison(g.op)) {
    RECUR_LAUNCH(n, s, (compare_kernel<I, I>), g, static_cast<const I*>(a),
                 static_cast<const I*>(b), static_cast<bool*>(y), n);
  } else {
    RECUR_LAUNCH(n, s, binary_int_kernel<I>, g, static_cast<const I*>(a), static_cast<const I*>(b),
                 static_cast<I*>(y), n, flag, site);
  }
}

}  // namespace

cudaError_t launch_binary(DType t, const BinaryArgs& g, const void* a, const void* b, void* y,
                          int64_t n, int32_t* flag, int32_t site, cudaStream_t s) {
  switch (t) {
    case DType::kFloat32:
      binary_typed<float, float>(g, a, b, y, n, s);
      break;
    case DType::kFloat64:
      binary_typed<double, double>(g, a, b, y, n, s);
      break;
    case DType::kFloat16:
      binary_typed<__half, float>(g, a, b, y, n, s);
      break;
    case DType::kInt32:
      binary_int_typed<int32_t>(g, a, b, y, n, flag, site, s);
      break;
    case DType::kInt64:
      binary_int_typed<long long>(g, a, b, y, n, flag, site, s);
      break;
    case DType::kBool:
      RECUR_LAUNCH(n, s, (compare_kernel<bool, int>), g, static_cast<const bool*>(a),
                   static_cast<const bool*>(b), static_cast<bool*>(y), n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_unary(DType t, int32_t op, double alpha, double beta, const void* x, void* y,
                         int64_t n, cudaStream_t s) {
  switch (t) {
    case DType::kFloat32:
      RECUR_LAUNCH(n, s, (unary_float_kernel<float, float>), op, alpha, beta,
                   static_cast<const float*>(x), static_cast<float*>(y), n);
      break;
    case DType::kFloat64:
      RECUR_LAUNCH(n, s, (unary_float_kernel<double, double>), op, alpha, beta,
                   static_cast<const double*>(x), static_cast<double*>(y), n);
      break;
    case DType::kFloat16:
      RECUR_LAUNCH(n, s, (unary_float_kernel<__half, float>), op, alpha, beta,
                   static_cast<const __half*>(x), static_cast<__half*>(y), n);
      break;
    case DType::kInt32:
      RECUR_LAUNCH(n, s, unary_int_kernel<int32_t>, op, static_cast<const int32_t*>(x),
                   static_cast<int32_t*>(y), n);
      break;
    case DType::kInt64:
      RECUR_LAUNCH(n, s, unary_int_kernel<long long>, op, static_cast<const long long*>(x),
                   static_cast<long long*>(y), n);
      break;
    case DType::kBool:
      RECUR_LAUNCH(n, s, not_kernel, static_cast<const bool*>(x), static_cast<bool*>(y), n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_where(size_t elem, const WhereArgs& g, const bool* c, const void* x,
                         const void* y, void* out, int64_t n, cudaStream_t s) {
  switch (elem) {
    case 1:
      RECUR_LAUNCH(n, s, where_kernel<uint8_t>, g, c, static_cast<const uint8_t*>(x),
                   static_cast<const uint8_t*>(y), static_cast<uint8_t*>(out), n);
      break;
    case 2:
      RECUR_LAUNCH(n, s, where_kernel<uint16_t>, g, c, static_cast<const uint16_t*>(x),
                   static_cast<const uint16_t*>(y), static_cast<uint16_t*>(out), n);
      break;
    case 4:
      RECUR_LAUNCH(n, s, where_kernel<uint32_t>, g, c, static_cast<const uint32_t*>(x),
                   static_cast<const uint32_t*>(y), static_cast<uint32_t*>(out), n);
      break;
    case 8:
      RECUR_LAUNCH(
          n, s, where_kernel<unsigned long long>, g, c, static_cast<const unsigned long long*>(x),
          static_cast<const unsigned long long*>(y), static_cast<unsigned long long*>(out), n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_channel_affine(DType t, const void* x, const void* scale, const void* shift,
                                  void* y, int64_t channels, int64_t inner, int64_t n,
                                  cudaStream_t s) {
  switch (t) {
    case DType::kFloat32:
      RECUR_LAUNCH(n, s, (affine_kernel<float, float>), static_cast<const float*>(x),
                   static_cast<const float*>(scale), static_cast<const float*>(shift),
                   static_cast<float*>(y), channels, inner, n);
      break;
    case DType::kFloat64:
      RECUR_LAUNCH(n, s, (affine_kernel<double, double>), static_cast<const double*>(x),
                   static_cast<const double*>(scale), static_cast<const double*>(shift),
                   static_cast<double*>(y), channels, inner, n);
      break;
    case DType::kFloat16:
      RECUR_LAUNCH(n, s, (affine_kernel<__half, float>), static_cast<const __half*>(x),
                   static_cast<const float*>(scale), static_cast<const float*>(shift),
                   static_cast<__half*>(y), channels, inner, n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_cast(int32_t from, const void* src, int32_t to, void* dst, int64_t n,
                        cudaStream_t s) {
  RECUR_LAUNCH(n, s, cast_kernel, from, src, to, dst, n);
  return cudaGetLastError();
}

}  // namespace recur::cuda::ops
