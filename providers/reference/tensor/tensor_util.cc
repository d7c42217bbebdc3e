#include "providers/reference/tensor/tensor_util.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"

namespace recur::reference {

size_t max_tensor_bytes() {
  static const size_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return size_t{1} << 40;
    return static_cast<size_t>(pages) * static_cast<size_t>(page);
  }();
  return limit;
}

Result<int64_t> checked_numel(const Shape& shape, DType dtype) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0) return invalid_argument("negative dimension in shape " + shape_to_string(shape));
    if (d == 0) return int64_t{0};  // an empty tensor, whatever the other dimensions are
  }
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) overflow = true;
  }
  const size_t esize = dtype_size(dtype) == 0 ? 1 : dtype_size(dtype);
  if (overflow || static_cast<uint64_t>(n) > max_tensor_bytes() / esize) {
    return out_of_range("a tensor of shape " + shape_to_string(shape) + " and dtype " +
                        std::string(dtype_name(dtype)) + " would exceed the host's memory (" +
                        std::to_string(max_tensor_bytes() >> 20) + " MiB)");
  }
  return n;
}

int64_t dims_product(const Shape& shape, size_t begin, size_t end) {
  for (size_t d = begin; d < end; ++d)
    if (shape[d] == 0) return 0;
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) {
    if (__builtin_mul_overflow(n, shape[d], &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

Result<Tensor*> allocate_checked(KernelContext& ctx, size_t i, DType dtype, const Shape& shape) {
  auto n = checked_numel(shape, dtype);
  if (!n.ok()) return n.status().with_context(ctx.node().describe());
  return ctx.allocate_output(i, dtype, shape);
}

namespace {

template <class U>
void strided_copy_t(const U* in, U* out, const Shape& shape, const Shape& st, int64_t off) {
  const int64_t total = shape_numel(shape);
  if (total == 0) return;
  const size_t rank = shape.size();
  if (rank == 0) {
    out[0] = in[off];
    return;
  }
  const int64_t inner = shape[rank - 1];
  const int64_t inner_stride = st[rank - 1];
  Shape idx(rank, 0);
  int64_t base = off;
  for (int64_t o = 0; o < total; o += inner) {
    const U* src = in + base;
    U* dst = out + o;
    if (inner_stride == 1) {
      std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(U));
    } else if (inner_stride == 0) {
      std::fill_n(dst, inner, *src);
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[j] = src[j * inner_stride];
    }
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      base += st[d];
      if (idx[d] < shape[d]) break;
      base -= st[d] * shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

void strided_copy(const void* in, void* out, size_t elem_size, const Shape& out_shape,
                  const Shape& in_strides, int64_t in_offset) {
  // The copy works a row (the innermost dimension) at a time, so it is only as fast as its
  // rows are long. Dimensions of 1 are dropped, and a dimension is merged into the one inside
  // it where its stride spans that whole dimension: a Tile of [1] to [n] (view [n, 1],
  // strides [0, 1]) becomes one row of stride 0, a fill, instead of n rows of one element.
  Shape shape, strides;
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    int64_t span = 0;
    if (!shape.empty() && !__builtin_mul_overflow(in_strides[d], out_shape[d], &span) &&
        strides.back() == span) {
      shape.back() *= out_shape[d];
      strides.back() = in_strides[d];
    } else {
      shape.push_back(out_shape[d]);
      strides.push_back(in_strides[d]);
    }
  }
  visit_element_size(elem_size, [&](auto tag) {
    using U = typename decltype(tag)::type;
    strided_copy_t(static_cast<const U*>(in), static_cast<U*>(out), shape, strides, in_offset);
  });
}

void permute_copy(const Tensor& in, Tensor& out, const Shape& perm) {
  if (in.numel() == 0) return;
  const Shape in_strides = contiguous_strides(in.shape());
  Shape strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[static_cast<size_t>(perm[i])];
  strided_copy(in.raw_data(), out.raw_data(), dtype_size(in.dtype()), out.shape(), strides, 0);
}

namespace {

Status check_one_element(const Tensor& t, const std::string& what) {
  if (!t.is_cpu()) return invalid_argument(what + " must be on the host");
  if (t.numel() != 1) {
    return invalid_argument(what + " must have one element, not shape " +
                            shape_to_string(t.shape()));
  }
  return ok_status();
}

}  // namespace

void fill_elements(Tensor& out, const Tensor& value) {
  visit_element_size(dtype_size(value.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, value.raw_data(), sizeof(U));
    U* p = static_cast<U*>(out.raw_data());
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = v;
  });
}

Result<double> read_scalar_double(const Tensor& t, const std::string& what) {
  RECUR_RETURN_IF_ERROR(check_one_element(t, what));
  double v = 0;
  const bool ok = visit_dtype(kAllTypes, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<double>(to_compute(t.data<T>()[0]));
  });
  if (!ok) {
    return invalid_argument(what + " has unsupported dtype " + std::string(dtype_name(t.dtype())));
  }
  return v;
}

Result<int64_t> read_scalar_int(const Tensor& t, const std::string& what) {
  RECUR_RETURN_IF_ERROR(check_one_element(t, what));
  int64_t v = 0;
  bool in_range = true;
  const bool ok = visit_dtype(kAllTypes, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto x = to_compute(t.data<T>()[0]);
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      // 2^63 is exactly representable; anything at or beyond it does not fit.
      if (!(std::fabs(static_cast<double>(x)) < 9223372036854775808.0)) {
        in_range = false;
      } else {
        v = static_cast<int64_t>(x);
      }
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        in_range = false;
      } else {
        v = static_cast<int64_t>(x);
      }
    } else {
      v = static_cast<int64_t>(x);
    }
  });
  if (!ok) {
    return invalid_argument(what + " has unsupported dtype " + std::string(dtype_name(t.dtype())));
  }
  if (!in_range) return out_of_range(what + " is not a representable integer");
  return v;
}

Result<std::optional<Shape>> optional_int_input(const KernelContext& ctx, size_t i,
                                                const std::string& what) {
  const Tensor* t = ctx.input(i);
  if (!t) return std::optional<Shape>();
  auto v = read_int_values(*t, what);
  if (!v.ok()) return v.status().with_context(ctx.node().describe());
  return std::optional<Shape>(std::move(v).value());
}

Status element_offsets(const Shape& data, const Shape& indices,
                       std::span<const int64_t> index_values, int64_t axis_attr,
                       std::vector<int64_t>& offsets) {
  offsets.clear();
  if (indices.size() != data.size()) {
    return invalid_argument("indices " + shape_to_string(indices) + " and data " +
                            shape_to_string(data) + " differ in rank");
  }
  RECUR_ASSIGN_OR_RETURN(int64_t axis,
                         normalize_axis(axis_attr, static_cast<int64_t>(data.size()), "axis"));
  const auto ax = static_cast<size_t>(axis);
  for (size_t d = 0; d < data.size(); ++d) {
    if (d != ax && indices[d] > data[d]) {
      return invalid_argument("indices " + shape_to_string(indices) + " exceed data " +
                              shape_to_string(data) + " in dimension " + std::to_string(d));
    }
  }
  if (index_values.empty()) return ok_status();
  // Some index is in range only if data is not empty, so its strides cannot overflow.
  const Shape strides = contiguous_strides(data);
  offsets.resize(index_values.size());
  const size_t rank = data.size();
  Shape pos(rank, 0);
  int64_t base = 0;  // the offset of `pos` without the axis coordinate
  const int64_t dim = rank ? data[ax] : 1;
  for (size_t n = 0; n < index_values.size(); ++n) {
    int64_t i = index_values[n];
    if (i < -dim || i >= dim) {
      return out_of_range("index " + std::to_string(i) + " is out of range for axis " +
                          std::to_string(axis) + " of size " + std::to_string(dim) +
                          " (data shape " + shape_to_string(data) + ")");
    }
    if (i < 0) i += dim;
    offsets[n] = base + i * (rank ? strides[ax] : 0);
    for (size_t d = rank; d-- > 0;) {
      ++pos[d];
      if (d != ax) base += strides[d];
      if (pos[d] < indices[d]) break;
      if (d != ax) base -= strides[d] * indices[d];
      pos[d] = 0;
    }
  }
  return ok_status();
}

std::optional<std::vector<int64_t>> constant_ints(const InferContext& ctx, size_t i) {
  const Tensor* t = ctx.input_value(i);
  if (!t) return std::nullopt;
  auto v = read_int_values(*t, "input");
  if (!v.ok()) return std::nullopt;
  return std::move(v).value();
}

std::vector<Dim> unknown_dims(size_t rank) { return std::vector<Dim>(rank); }

std::optional<Shape> fixed_shape(const std::optional<std::vector<Dim>>& dims) {
  if (!dims) return std::nullopt;
  Shape s;
  for (const Dim& d : *dims) {
    if (!d.is_fixed()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

TypeInfo type_with_dims(DType dtype, std::vector<Dim> dims) {
  TypeInfo t;
  t.dtype = dtype;
  t.shape = std::move(dims);
  return t;
}

TypeInfo type_with_rank(DType dtype, size_t rank) {
  // A rank computed from a corrupt model (an axes input declared with 2^40 elements) must not
  // become a vector of 2^40 dimensions: past any real rank the result is "rank unknown", and
  // the kernel checks the actual values at run time.
  constexpr size_t kMaxInferredRank = 64;
  if (rank > kMaxInferredRank) return TypeInfo{dtype, std::nullopt};
  return type_with_dims(dtype, unknown_dims(rank));
}

std::string ints_to_string(const std::vector<int64_t>& v) { return shape_to_string(v); }

}  // namespace recur::reference

namespace recur::reference {

Result<NdPlan> nd_plan(const Shape& data, const Shape& indices,
                       const std::vector<int64_t>& index_values, int64_t batch_dims) {
  const auto r = static_cast<int64_t>(data.size());
  const auto q = static_cast<int64_t>(indices.size());
  if (q < 1) return invalid_argument("indices must have rank >= 1");
  if (batch_dims < 0 || batch_dims >= q || batch_dims > r) {
    return invalid_argument("batch_dims " + std::to_string(batch_dims) +
                            " must be less than the rank of indices (" + std::to_string(q) +
                            ") and at most the rank of data (" + std::to_string(r) + ")");
  }
  const auto b = static_cast<size_t>(batch_dims);
  const int64_t m = indices.back();
  if (m > r - batch_dims) {
    return invalid_argument("index tuples of length " + std::to_string(m) + " (indices " +
                            shape_to_string(indices) + ") are too long for data " +
                            shape_to_string(data) + " with batch_dims " +
                            std::to_string(batch_dims));
  }
  for (size_t d = 0; d < b; ++d) {
    if (data[d] != indices[d]) {
      return invalid_argument("the batch dimensions of data " + shape_to_string(data) +
                              " and indices " + shape_to_string(indices) + " differ");
    }
  }
  NdPlan p;
  p.out_shape.assign(indices.begin(), indices.end() - 1);
  p.out_shape.insert(p.out_shape.end(), data.begin() + batch_dims + m, data.end());
  // Every index must be in range, whatever else is empty.
  const auto mu = static_cast<size_t>(m);
  for (size_t n = 0; n < index_values.size(); ++n) {
    const int64_t i = index_values[n];
    const int64_t dim = data[b + n % mu];
    if (i < -dim || i >= dim) {
      return out_of_range("index " + std::to_string(i) + " is out of range for dimension " +
                          std::to_string(b + n % mu) + " of data " + shape_to_string(data));
    }
  }
  // One offset per tuple: with tuples of length 0 their count is not bounded by the indices'
  // size.
  const Shape tuple_shape(indices.begin(), indices.end() - 1);
  RECUR_ASSIGN_OR_RETURN(const int64_t count, checked_numel(tuple_shape, DType::kInt64));
  p.slice = dims_product(data, b + mu, data.size());
  if (count == 0 || p.slice == 0) return p;  // nothing to move
  // Now every tuple names a non-empty slice of data, so data is not empty and the products
  // below are bounded by its size.
  const int64_t tuples = dims_product(indices, b, indices.size() - 1);
  const int64_t batch_stride = dims_product(data, b, data.size());
  const Shape strides = contiguous_strides(data);
  p.offsets.resize(static_cast<size_t>(count));
  for (size_t n = 0; n < p.offsets.size(); ++n) {
    int64_t off = static_cast<int64_t>(n) / tuples * batch_stride;
    for (size_t k = 0; k < mu; ++k) {
      const int64_t i = index_values[n * mu + k];
      off += (i < 0 ? i + data[b + k] : i) * strides[b + k];
    }
    p.offsets[n] = off;
  }
  return p;
}

}  // namespace recur::reference
