// The body of every cuda-generic glue kernel, one output element (or row) per call, as
// host/device functions. Each CUDA kernel in ops/*.cu is a grid-stride loop around one of these;
// the CPU tests call them in plain loops, so the arithmetic that runs on the GPU is the arithmetic
// that is tested against the reference provider. T is a storage type, C its compute type
// (float for float16), W an unsigned word of an element's size (data movement does not look at
// the bits), I an index type.
#pragma once

#include <math.h>

#include <cstdint>

#include "providers/cuda/ops/elementwise_math.h"
#include "providers/cuda/ops/index_math.h"

namespace recur::cuda::ops {

// Sets the run's error flag to `code` if it is still clear (the first error wins).
RECUR_HD inline void raise_error(int32_t* flag, int32_t code) {
#if defined(__CUDA_ARCH__)
  if (flag) atomicCAS(flag, 0, code);
#else
  if (flag && *flag == 0) *flag = code;
#endif
}

// --- Elementwise -----------------------------------------------------------------------------

template <class T, class C>
RECUR_HD void binary_float_element(const BinaryArgs& g, const T* a, const T* b, T* y, int64_t i) {
  const C x = static_cast<C>(a[source_offset(g.a, i)]);
  const C z = static_cast<C>(b[source_offset(g.b, i)]);
  y[i] = static_cast<T>(float_binary<C>(g.op, x, z));
}

template <class I>
RECUR_HD void binary_int_element(const BinaryArgs& g, const I* a, const I* b, I* y, int64_t i,
                                 int32_t* flag, int32_t site) {
  int32_t err = 0;
  y[i] = int_binary<I>(g.op, a[source_offset(g.a, i)], b[source_offset(g.b, i)], &err);
  if (err) raise_error(flag, site);
}

template <class T, class C>
RECUR_HD void compare_element(const BinaryArgs& g, const T* a, const T* b, bool* y, int64_t i) {
  y[i] = compare<C>(g.op, static_cast<C>(a[source_offset(g.a, i)]),
                    static_cast<C>(b[source_offset(g.b, i)]));
}

template <class T, class C>
RECUR_HD void unary_float_element(int32_t op, double alpha, double beta, const T* x, T* y,
                                  int64_t i) {
  y[i] = static_cast<T>(unary_apply<C>(op, static_cast<C>(x[i]), alpha, beta));
}

// Where(cond, X, Y) with broadcasting of all three.
struct WhereArgs {
  Strided c, x, y;
};
template <class W>
RECUR_HD void where_element(const WhereArgs& g, const bool* c, const W* x, const W* y, W* out,
                            int64_t i) {
  out[i] = c[source_offset(g.c, i)] ? x[source_offset(g.x, i)] : y[source_offset(g.y, i)];
}

// Per-channel affine y = x*scale[c] + shift[c] over [outer, channels, inner]: inference
// BatchNormalization with its four parameters folded into two at load.
template <class T, class C>
RECUR_HD void channel_affine_element(const T* x, const C* scale, const C* shift, T* y,
                                     int64_t channels, int64_t inner, int64_t i) {
  const int64_t ch = (i / inner) % channels;
  y[i] = static_cast<T>(static_cast<C>(x[i]) * scale[ch] + shift[ch]);
}

// --- Cast ------------------------------------------------------------------------------------

// DType codes (ONNX's) of the types Cast moves between.
enum CastType : int32_t {
  kCastF32 = 1,
  kCastU8 = 2,
  kCastI8 = 3,
  kCastI32 = 6,
  kCastI64 = 7,
  kCastBool = 9,
  kCastF16 = 10,
  kCastF64 = 11,
};

// A value on its way through Cast: integers stay integers, floats stay double.
struct CastValue {
  bool is_int;
  long long i;
  double f;
};

// Reading and writing float16 needs the type that holds its bits: __half on the device. The
// host side (the CPU tests) does not use float16 here.
template <class Half>
RECUR_HD CastValue cast_load(const void* src, int32_t type, int64_t k) {
  switch (type) {
    case kCastF32:
      return {false, 0, static_cast<const float*>(src)[k]};
    case kCastF64:
      return {false, 0, static_cast<const double*>(src)[k]};
    case kCastF16:
      return {false, 0, static_cast<double>(static_cast<float>(static_cast<const Half*>(src)[k]))};
    case kCastU8:
      return {true, static_cast<const uint8_t*>(src)[k], 0};
    case kCastI8:
      return {true, static_cast<const int8_t*>(src)[k], 0};
    case kCastI32:
      return {true, static_cast<const int32_t*>(src)[k], 0};
    case kCastI64:
      return {true, static_cast<const int64_t*>(src)[k], 0};
    case kCastBool:
      return {true, static_cast<const bool*>(src)[k] ? 1 : 0, 0};
  }
  return {true, 0, 0};
}

// Float to integer truncates toward zero (NaN and values out of range saturate on the GPU).
template <class Half>
RECUR_HD void cast_store(void* dst, int32_t type, int64_t k, const CastValue& v) {
  switch (type) {
    case kCastF32:
      static_cast<float*>(dst)[k] = v.is_int ? static_cast<float>(v.i) : static_cast<float>(v.f);
      return;
    case kCastF64:
      static_cast<double*>(dst)[k] = v.is_int ? static_cast<double>(v.i) : v.f;
      return;
    case kCastF16:
      static_cast<Half*>(dst)[k] =
          static_cast<Half>(v.is_int ? static_cast<float>(v.i) : static_cast<float>(v.f));
      return;
    case kCastBool:
      static_cast<bool*>(dst)[k] = v.is_int ? v.i != 0 : v.f != 0.0;
      return;
    case kCastU8:
      static_cast<uint8_t*>(dst)[k] =
          static_cast<uint8_t>(v.is_int ? v.i : static_cast<long long>(v.f));
      return;
    case kCastI8:
      static_cast<int8_t*>(dst)[k] =
          static_cast<int8_t>(v.is_int ? v.i : static_cast<long long>(v.f));
      return;
    case kCastI32:
      static_cast<int32_t*>(dst)[k] =
          static_cast<int32_t>(v.is_int ? v.i : static_cast<long long>(v.f));
      return;
    case kCastI64:
      static_cast<int64_t*>(dst)[k] = v.is_int ? v.i : static_cast<long long>(v.f);
      return;
  }
}

// --- Data movement ---------------------------------------------------------------------------

template <class W>
RECUR_HD void strided_copy_element(const Strided& s, const W* src, W* dst, int64_t i) {
  dst[i] = src[source_offset(s, i)];
}

template <class W>
RECUR_HD void pad_element(const PadIndex& p, const W* src, W* dst, W fill, int64_t i) {
  const int64_t s = pad_source(p, i);
  dst[i] = s < 0 ? fill : src[s];
}

template <class W, class I>
RECUR_HD void gather_element(const GatherIndex& g, const W* data, const I* indices, W* out,
                             int64_t i, int32_t* flag, int32_t site) {
  const GatherPos p = gather_pos(g, i);
  bool bad = false;
  const int64_t index = normalized_index(static_cast<int64_t>(indices[p.q]), g.axis_dim, &bad);
  if (bad) raise_error(flag, site);
  out[i] = g.axis_dim > 0 ? data[gather_source(g, p, index)] : W(0);
}

// ScatterElements (reduction none): the output is a copy of data; update element i (of the
// indices' shape, row-major) goes to the data position it names along `axis`. Positions are
// computed as in GatherElements: the index replaces the axis coordinate.
struct ScatterArgs {
  int32_t rank = 0;
  int64_t idx_dims[kMaxRank] = {};  // indices/updates shape
  int64_t data_strides[kMaxRank] = {};
  int32_t axis = 0;
  int64_t axis_dim = 0;
};
template <class W, class I>
RECUR_HD void scatter_element(const ScatterArgs& g, const I* indices, const W* updates, W* out,
                              int64_t i, int32_t* flag, int32_t site) {
  int64_t rest = i, off = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t c = rest % g.idx_dims[d];
    rest /= g.idx_dims[d];
    if (d == g.axis) {
      bool bad = false;
      const int64_t v = normalized_index(static_cast<int64_t>(indices[i]), g.axis_dim, &bad);
      if (bad) {
        raise_error(flag, site);
        return;
      }
      off += v * g.data_strides[d];
    } else {
      off += c * g.data_strides[d];
    }
  }
  out[off] = updates[i];
}

template <class W>
RECUR_HD void fill_element(W* dst, W value, int64_t i) {
  dst[i] = value;
}

template <class T>
RECUR_HD void range_element(T start, T delta, T* out, int64_t i) {
  out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
}

// --- Reductions ------------------------------------------------------------------------------

enum ReduceOp : int32_t {
  kReduceSum = 0,
  kReduceMean,
  kReduceMax,
  kReduceMin,
  kReduceProd,
  kReduceSumSquare,
  kReduceL1,
  kReduceL2,
  kReduceLogSum,
  kReduceLogSumExp,
};

// Output element i of a reduction over [outer, reduced, inner], accumulated in C.
template <class T, class C>
RECUR_HD void reduce_element(int32_t op, const ReduceIndex& r, const T* x, T* y, int64_t i) {
  const int64_t base = reduce_base(r, i);
  C acc = op == kReduceProd ? C(1) : C(0);
  C mx = C(0);
  if (op == kReduceMax || op == kReduceMin || op == kReduceLogSumExp) {
    mx = r.reduced > 0 ? static_cast<C>(x[base]) : C(0);
    for (int64_t k = 1; k < r.reduced; ++k) {
      const C v = static_cast<C>(x[base + k * r.inner]);
      if (op == kReduceMin ? (v < mx || v != v) : (v > mx || v != v)) mx = v;
    }
    if (op != kReduceLogSumExp) {
      // Max and Min of nothing: ONNX leaves it to the implementation; the reference's choice.
      y[i] = static_cast<T>(r.reduced > 0 ? mx : (op == kReduceMax ? -INFINITY : INFINITY));
      return;
    }
    // An infinite or NaN maximum is the result, as in the reference (exp(x - max) would be
    // exp(inf - inf), NaN); an empty row gives log(0), -inf.
    if (r.reduced == 0 || !isfinite(mx)) {
      y[i] = static_cast<T>(r.reduced > 0 ? mx : -C(INFINITY));
      return;
    }
  }
  for (int64_t k = 0; k < r.reduced; ++k) {
    const C v = static_cast<C>(x[base + k * r.inner]);
    switch (op) {
      case kReduceProd:
        acc *= v;
        break;
      case kReduceSumSquare:
      case kReduceL2:
        acc += v * v;
        break;
      case kReduceL1:
        acc += v < C(0) ? -v : v;
        break;
      case kReduceLogSumExp:
        acc += exp(v - mx);
        break;
      default:
        acc += v;
        break;
    }
  }
  switch (op) {
    case kReduceMean:
      acc = r.reduced > 0 ? acc / static_cast<C>(r.reduced) : C(NAN);
      break;
    case kReduceL2:
      acc = sqrt(acc);
      break;
    case kReduceLogSum:
      acc = log(acc);
      break;
    case kReduceLogSumExp:
      acc = mx + log(acc);
      break;
    default:
      break;
  }
  y[i] = static_cast<T>(acc);
}

// Integer reductions (Sum, Max, Min, Prod) wrap like the elementwise ops.
template <class I>
RECUR_HD void reduce_int_element(int32_t op, const ReduceIndex& r, const I* x, I* y, int64_t i) {
  using U = unsigned long long;
  const int64_t base = reduce_base(r, i);
  U acc = op == kReduceProd ? 1 : 0;
  I m = r.reduced > 0 ? x[base] : I(0);
  for (int64_t k = 0; k < r.reduced; ++k) {
    const I v = x[base + k * r.inner];
    if (op == kReduceProd) acc *= static_cast<U>(v);
    if (op == kReduceSum || op == kReduceMean) acc += static_cast<U>(v);
    if (op == kReduceMax && v > m) m = v;
    if (op == kReduceMin && v < m) m = v;
  }
  if (op == kReduceMax || op == kReduceMin) {
    y[i] = m;
  } else if (op == kReduceMean) {
    y[i] = r.reduced > 0 ? static_cast<I>(static_cast<I>(acc) / static_cast<I>(r.reduced)) : 0;
  } else {
    y[i] = static_cast<I>(acc);
  }
}

// ArgMax / ArgMin over [outer, reduced, inner]; ties go to the first index, or the last with
// select_last_index. NaN is the extreme of both (numpy's argmax/argmin, and the reference's):
// the first NaN wins, or the last with select_last_index.
template <class T, class C>
RECUR_HD void arg_element(bool is_max, bool last, const ReduceIndex& r, const T* x, int64_t* y,
                          int64_t i) {
  const int64_t base = reduce_base(r, i);
  int64_t best = 0;
  C bv = r.reduced > 0 ? static_cast<C>(x[base]) : C(0);
  for (int64_t k = 1; k < r.reduced; ++k) {
    const C v = static_cast<C>(x[base + k * r.inner]);
    bool better;
    if (bv != bv) {
      better = last && v != v;
    } else if (v != v) {
      better = true;
    } else if (v == bv) {
      better = last;
    } else {
      better = is_max ? v > bv : v < bv;
    }
    if (better) {
      bv = v;
      best = k;
    }
  }
  y[i] = best;
}

// Softmax / LogSoftmax of row i of [outer, reduced, inner].
template <class T, class C>
RECUR_HD void softmax_row(bool log_softmax, const ReduceIndex& r, const T* x, T* y, int64_t i) {
  const int64_t base = reduce_base(r, i);
  C mx = r.reduced > 0 ? static_cast<C>(x[base]) : C(0);
  for (int64_t k = 1; k < r.reduced; ++k) {
    const C v = static_cast<C>(x[base + k * r.inner]);
    if (v > mx) mx = v;
  }
  C sum(0);
  for (int64_t k = 0; k < r.reduced; ++k) sum += exp(static_cast<C>(x[base + k * r.inner]) - mx);
  const C lsum = log(sum);
  for (int64_t k = 0; k < r.reduced; ++k) {
    const C v = static_cast<C>(x[base + k * r.inner]) - mx;
    y[base + k * r.inner] = static_cast<T>(log_softmax ? v - lsum : exp(v) / sum);
  }
}

// ConvTranspose's col2im as a gather (Col2ImArgs): output element i of [n, m, y...].
template <class T, class C>
RECUR_HD void col2im_element(const Col2ImArgs& a, const T* cols, const T* bias, T* y, int64_t i) {
  const int64_t row = i / a.p_out;  // n * m + channel
  int64_t rest = i % a.p_out;
  int64_t o[3] = {0, 0, 0};
  for (int d = a.dims - 1; d >= 0; --d) {
    o[d] = rest % a.y[d];
    rest /= a.y[d];
  }
  C acc = a.has_bias ? static_cast<C>(bias[row % a.m]) : C(0);
  const T* base = cols + row * a.taps * a.p_in;
  for (int64_t tap = 0; tap < a.taps; ++tap) {
    int64_t t[3] = {0, 0, 0}, r = tap;
    for (int d = a.dims - 1; d >= 0; --d) {
      t[d] = r % a.k[d];
      r /= a.k[d];
    }
    int64_t at = 0;
    bool hit = true;
    for (int d = 0; d < a.dims && hit; ++d) {
      const int64_t q = o[d] + a.pad[d] - t[d] * a.dil[d];
      hit = q >= 0 && q % a.stride[d] == 0 && q / a.stride[d] < a.x[d];
      at = at * a.x[d] + q / a.stride[d];
    }
    if (hit) acc += static_cast<C>(base[tap * a.p_in + at]);
  }
  y[i] = static_cast<T>(acc);
}

// LayerNormalization of row i of [outer, reduced]: (x - mean) / sqrt(var + eps) * scale + bias,
// scale and bias read through broadcasting over the normalized dimensions.
struct LayerNormArgs {
  int64_t outer = 0, reduced = 0;
  float epsilon = 1e-5f;
  Strided scale, bias;
  int32_t has_bias = 0;
};
template <class T, class C>
RECUR_HD void layer_norm_row(const LayerNormArgs& g, const T* x, const T* scale, const T* bias,
                             T* y, C* mean_out, C* inv_out, int64_t i) {
  const T* row = x + i * g.reduced;
  C mean(0);
  for (int64_t k = 0; k < g.reduced; ++k) mean += static_cast<C>(row[k]);
  mean /= static_cast<C>(g.reduced);
  C var(0);
  for (int64_t k = 0; k < g.reduced; ++k) {
    const C d = static_cast<C>(row[k]) - mean;
    var += d * d;
  }
  var /= static_cast<C>(g.reduced);
  const C inv = C(1) / sqrt(var + static_cast<C>(g.epsilon));
  for (int64_t k = 0; k < g.reduced; ++k) {
    C v = (static_cast<C>(row[k]) - mean) * inv * static_cast<C>(scale[source_offset(g.scale, k)]);
    if (g.has_bias) v += static_cast<C>(bias[source_offset(g.bias, k)]);
    y[i * g.reduced + k] = static_cast<T>(v);
  }
  if (mean_out) mean_out[i] = mean;
  if (inv_out) inv_out[i] = inv;
}

// TopK: element k of row (outer, inner) of [outer, n, inner] goes to position rank(k) when that
// rank is below K. An element ranks after every element that is better (larger for largest=1,
// smaller otherwise), and after equal ones with a lower index, so ties keep index order. NaN is
// larger than every number and equal to NaN (the reference's order, numpy's sort's): without a
// total order, NaN's ranks would collide, leaving some slots unwritten and others written twice.
template <class T, class C>
RECUR_HD void top_k_element(const ReduceIndex& r, int64_t K, bool largest, const T* x, T* values,
                            int64_t* indices, int64_t e) {
  const int64_t row = e / r.reduced, k = e % r.reduced;
  const int64_t outer = row / r.inner, inner = row % r.inner;
  const int64_t base = outer * r.reduced * r.inner + inner;
  const C v = static_cast<C>(x[base + k * r.inner]);
  const bool v_nan = v != v;
  int64_t rank = 0;
  for (int64_t m = 0; m < r.reduced && rank < K; ++m) {
    if (m == k) continue;
    const C u = static_cast<C>(x[base + m * r.inner]);
    const bool u_nan = u != u;
    const bool above = u_nan ? !v_nan : (!v_nan && u > v);
    const bool below = v_nan ? !u_nan : (!u_nan && u < v);
    const bool better = (largest ? above : below) || (!above && !below && m < k);
    if (better) ++rank;
  }
  if (rank >= K) return;
  const int64_t out = (outer * K + rank) * r.inner + inner;
  values[out] = static_cast<T>(v);
  indices[out] = k;
}

}  // namespace recur::cuda::ops
