// Data movement: strided copies (Transpose, Slice, Expand, broadcasts), Pad, Gather,
// ScatterElements, fills (ConstantOfShape), Range.
#include "providers/cuda/ops/kernel_util.cuh"
#include "providers/cuda/ops/launch.h"

namespace recur::cuda::ops {

namespace {

using u64 = unsigned long long;

template <class W>
__global__ void strided_kernel(Strided g, const W* src, W* dst, int64_t n) {
  RECUR_FOR_EACH(i, n) { strided_copy_element<W>(g, src, dst, i); }
}

template <class W>
__global__ void pad_kernel(PadIndex g, const W* src, W* dst, W fill, int64_t n) {
  RECUR_FOR_EACH(i, n) { pad_element<W>(g, src, dst, fill, i); }
}

template <class W, class I>
__global__ void gather_kernel(GatherIndex g, const W* data, const I* idx, W* out, int64_t n,
                              int32_t* flag, int32_t site) {
  RECUR_FOR_EACH(i, n) { gather_element<W, I>(g, data, idx, out, i, flag, site); }
}

template <class W, class I>
__global__ void scatter_kernel(ScatterArgs g, const I* idx, const W* upd, W* out, int64_t n,
                               int32_t* flag, int32_t site) {
  RECUR_FOR_EACH(i, n) { scatter_element<W, I>(g, idx, upd, out, i, flag, site); }
}

template <class W>
__global__ void fill_kernel(W* dst, W value, int64_t n) {
  RECUR_FOR_EACH(i, n) { fill_element<W>(dst, value, i); }
}

template <class T>
__global__ void range_kernel(T start, T delta, T* out, int64_t n) {
  RECUR_FOR_EACH(i, n) { range_element<T>(start, delta, out, i); }
}

// Calls f(type_tag<W>) with the unsigned word of `elem` bytes.
template <class W>
struct Tag {
  using type = W;
};
template <class F>
cudaError_t by_size(size_t elem, F&& f) {
  switch (elem) {
    case 1:
      f(Tag<uint8_t>{});
      break;
    case 2:
      f(Tag<uint16_t>{});
      break;
    case 4:
      f(Tag<uint32_t>{});
      break;
    case 8:
      f(Tag<u64>{});
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_strided_copy(size_t elem, const Strided& g, const void* src, void* dst,
                                int64_t n, cudaStream_t s) {
  return by_size(elem, [&](auto tag) {
    using W = typename decltype(tag)::type;
    RECUR_LAUNCH(n, s, strided_kernel<W>, g, static_cast<const W*>(src), static_cast<W*>(dst), n);
  });
}

cudaError_t launch_pad(size_t elem, const PadIndex& g, const void* src, void* dst, uint64_t fill,
                       int64_t n, cudaStream_t s) {
  return by_size(elem, [&](auto tag) {
    using W = typename decltype(tag)::type;
    RECUR_LAUNCH(n, s, pad_kernel<W>, g, static_cast<const W*>(src), static_cast<W*>(dst),
                 static_cast<W>(fill), n);
  });
}

cudaError_t launch_gather(size_t elem, bool index64, const GatherIndex& g, const void* data,
                          const void* indices, void* out, int64_t n, int32_t* flag, int32_t site,
                          cudaStream_t s) {
  return by_size(elem, [&](auto tag) {
    using W = typename decltype(tag)::type;
    if (index64) {
      RECUR_LAUNCH(n, s, (gather_kernel<W, long long>), g, static_cast<const W*>(data),
                   static_cast<const long long*>(indices), static_cast<W*>(out), n, flag, site);
    } else {
      RECUR_LAUNCH(n, s, (gather_kernel<W, int32_t>), g, static_cast<const W*>(data),
                   static_cast<const int32_t*>(indices), static_cast<W*>(out), n, flag, site);
    }
  });
}

cudaError_t launch_scatter(size_t elem, bool index64, const ScatterArgs& g, const void* indices,
                           const void* updates, void* out, int64_t n, int32_t* flag, int32_t site,
                           cudaStream_t s) {
  return by_size(elem, [&](auto tag) {
    using W = typename decltype(tag)::type;
    if (index64) {
      RECUR_LAUNCH(n, s, (scatter_kernel<W, long long>), g, static_cast<const long long*>(indices),
                   static_cast<const W*>(updates), static_cast<W*>(out), n, flag, site);
    } else {
      RECUR_LAUNCH(n, s, (scatter_kernel<W, int32_t>), g, static_cast<const int32_t*>(indices),
                   static_cast<const W*>(updates), static_cast<W*>(out), n, flag, site);
    }
  });
}

cudaError_t launch_fill(size_t elem, uint64_t bits, void* dst, int64_t n, cudaStream_t s) {
  return by_size(elem, [&](auto tag) {
    using W = typename decltype(tag)::type;
    RECUR_LAUNCH(n, s, fill_kernel<W>, static_cast<W*>(dst), static_cast<W>(bits), n);
  });
}

cudaError_t launch_range(DType t, double start, double delta, long long istart, long long idelta,
                         void* out, int64_t n, cudaStream_t s) {
  switch (t) {
    case DType::kFloat32:
      RECUR_LAUNCH(n, s, range_kernel<float>, static_cast<float>(start), static_cast<float>(delta),
                   static_cast<float*>(out), n);
      break;
    case DType::kFloat64:
      RECUR_LAUNCH(n, s, range_kernel<double>, start, delta, static_cast<double*>(out), n);
      break;
    case DType::kInt32:
      RECUR_LAUNCH(n, s, range_kernel<int32_t>, static_cast<int32_t>(istart),
                   static_cast<int32_t>(idelta), static_cast<int32_t*>(out), n);
      break;
    case DType::kInt64:
      RECUR_LAUNCH(n, s, range_kernel<long long>, istart, idelta, static_cast<long long*>(out), n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace recur::cuda::ops
