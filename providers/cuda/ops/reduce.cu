// Row kernels: reductions, ArgMax/ArgMin, Softmax/LogSoftmax, LayerNormalization, TopK. One
// thread per output element or row: the rows of sequence-model glue are short (a vocabulary,
// a hidden size), and these kernels keep the data on the device rather than win benchmarks.
#include "providers/cuda/ops/kernel_util.cuh"
#include "providers/cuda/ops/launch.h"

namespace recur::cuda::ops {

namespace {

template <class T, class C>
__global__ void reduce_kernel(int32_t op, ReduceIndex r, const T* x, T* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { reduce_element<T, C>(op, r, x, y, i); }
}

template <class I>
__global__ void reduce_int_kernel(int32_t op, ReduceIndex r, const I* x, I* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { reduce_int_element<I>(op, r, x, y, i); }
}

template <class T, class C>
__global__ void arg_kernel(bool is_max, bool last, ReduceIndex r, const T* x, int64_t* y,
                           int64_t n) {
  RECUR_FOR_EACH(i, n) { arg_element<T, C>(is_max, last, r, x, y, i); }
}

template <class T, class C>
__global__ void softmax_kernel(bool log_softmax, ReduceIndex r, const T* x, T* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { softmax_row<T, C>(log_softmax, r, x, y, i); }
}

template <class T, class C>
__global__ void layer_norm_kernel(LayerNormArgs g, const T* x, const T* scale, const T* bias,
                                  T* y) {
  RECUR_FOR_EACH(i, g.outer) {
    layer_norm_row<T, C>(g, x, scale, bias, y, static_cast<C*>(nullptr), static_cast<C*>(nullptr),
                         i);
  }
}

template <class T, class C>
__global__ void top_k_kernel(ReduceIndex r, int64_t K, bool largest, const T* x, T* values,
                             int64_t* indices, int64_t n) {
  RECUR_FOR_EACH(e, n) { top_k_element<T, C>(r, K, largest, x, values, indices, e); }
}

// Calls f(Tag<T, C>) for a float type.
template <class T, class C>
struct Tag {
  using type = T;
  using compute = C;
};
template <class F>
cudaError_t by_float(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32:
      f(Tag<float, float>{});
      break;
    case DType::kFloat64:
      f(Tag<double, double>{});
      break;
    case DType::kFloat16:
      f(Tag<__half, float>{});
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <class T, class C>
__global__ void col2im_kernel(Col2ImArgs a, const T* cols, const T* bias, T* y, int64_t n) {
  RECUR_FOR_EACH(i, n) { col2im_element<T, C>(a, cols, bias, y, i); }
}

}  // namespace

cudaError_t launch_reduce(DType t, int32_t op, const ReduceIndex& r, const void* x, void* y,
                          int64_t n_out, cudaStream_t s) {
  if (t == DType::kInt32) {
    RECUR_LAUNCH(n_out, s, reduce_int_kernel<int32_t>, op, r, static_cast<const int32_t*>(x),
                 static_cast<int32_t*>(y), n_out);
    return cudaGetLastError();
  }
  if (t == DType::kInt64) {
    RECUR_LAUNCH(n_out, s, reduce_int_kernel<long long>, op, r, static_cast<const long long*>(x),
                 static_cast<long long*>(y), n_out);
    return cudaGetLastError();
  }
  return by_float(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename decltype(tag)::compute;
    RECUR_LAUNCH(n_out, s, (reduce_kernel<T, C>), op, r, static_cast<const T*>(x),
                 static_cast<T*>(y), n_out);
  });
}

cudaError_t launch_arg(DType t, bool is_max, bool last, const ReduceIndex& r, const void* x,
                       int64_t* y, int64_t n_out, cudaStream_t s) {
  if (t == DType::kInt64) {
    RECUR_LAUNCH(n_out, s, (arg_kernel<long long, long long>), is_max, last, r,
                 static_cast<const long long*>(x), y, n_out);
    return cudaGetLastError();
  }
  if (t == DType::kInt32) {
    RECUR_LAUNCH(n_out, s, (arg_kernel<int32_t, int32_t>), is_max, last, r,
                 static_cast<const int32_t*>(x), y, n_out);
    return cudaGetLastError();
  }
  return by_float(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename decltype(tag)::compute;
    RECUR_LAUNCH(n_out, s, (arg_kernel<T, C>), is_max, last, r, static_cast<const T*>(x), y, n_out);
  });
}

cudaError_t launch_softmax(DType t, bool log_softmax, const ReduceIndex& r, const void* x, void* y,
                           int64_t rows, cudaStream_t s) {
  return by_float(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename decltype(tag)::compute;
    RECUR_LAUNCH(rows, s, (softmax_kernel<T, C>), log_softmax, r, static_cast<const T*>(x),
                 static_cast<T*>(y), rows);
  });
}

cudaError_t launch_layer_norm(DType t, const LayerNormArgs& g, const void* x, const void* scale,
                              const void* bias, void* y, cudaStream_t s) {
  return by_float(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename decltype(tag)::compute;
    RECUR_LAUNCH(g.outer, s, (layer_norm_kernel<T, C>), g, static_cast<const T*>(x),
                 static_cast<const T*>(scale), static_cast<const T*>(bias), static_cast<T*>(y));
  });
}

cudaError_t launch_top_k(DType t, const ReduceIndex& r, int64_t K, bool largest, const void* x,
                         void* values, int64_t* indices, int64_t n, cudaStream_t s) {
  if (t == DType::kInt64) {
    RECUR_LAUNCH(n, s, (top_k_kernel<long long, long long>), r, K, largest,
                 static_cast<const long long*>(x), static_cast<long long*>(values), indices, n);
    return cudaGetLastError();
  }
  if (t == DType::kInt32) {
    RECUR_LAUNCH(n, s, (top_k_kernel<int32_t, int32_t>), r, K, largest,
                 static_cast<const int32_t*>(x), static_cast<int32_t*>(values), indices, n);
    return cudaGetLastError();
  }
  return by_float(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename decltype(tag)::compute;
    RECUR_LAUNCH(n, s, (top_k_kernel<T, C>), r, K, largest, static_cast<const T*>(x),
                 static_cast<T*>(values), indices, n);
  });
}

cudaError_t launch_col2im(DType t, const Col2ImArgs& a, const void* cols, const void* bias, void* y,
                          int64_t n, cudaStream_t s) {
  return by_float(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename decltype(tag)::compute;
    RECUR_LAUNCH(n, s, (col2im_kernel<T, C>), a, static_cast<const T*>(cols),
                 static_cast<const T*>(bias), static_cast<T*>(y), n);
  });
}

}  // namespace recur::cuda::ops
