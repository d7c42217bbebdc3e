#include "providers/reference/nn/nn_util.h"

#include <algorithm>

#include "providers/reference/common/gemm.h"

namespace recur::reference {

namespace {

// Attribute values beyond this are corrupt; bounding them keeps the size arithmetic far from
// int64 overflow.
constexpr int64_t kMaxAttr = int64_t{1} << 31;

template <class T>
void im2col_rec(const T* x, const Window& w, const Shape& kidx, const Shape& in_stride,
                const Shape& out_block, size_t dim, int64_t in_off, T pad, T* dst) {
  const int64_t s = w.stride[dim], pb = w.pad_begin[dim], d = w.dilation[dim];
  const int64_t in = w.in[dim], out = w.out[dim], base = kidx[dim] * d - pb;
  if (dim + 1 == w.rank()) {
    for (int64_t o = 0; o < out; ++o) {
      const int64_t pos = o * s + base;
      dst[o] = (pos >= 0 && pos < in) ? x[in_off + pos] : pad;
    }
    return;
  }
  const int64_t block = out_block[dim];
  for (int64_t o = 0; o < out; ++o) {
    const int64_t pos = o * s + base;
    T* sub = dst + o * block;
    if (pos < 0 || pos >= in) {
      std::fill(sub, sub + block, pad);
    } else {
      im2col_rec(x, w, kidx, in_stride, out_block, dim + 1, in_off + pos * in_stride[dim], pad,
                 sub);
    }
  }
}

template <class T>
void col2im_rec(const T* src, const Window& w, const Shape& kidx, const Shape& in_stride,
                const Shape& out_block, size_t dim, int64_t in_off, T* y) {
  const int64_t s = w.stride[dim], pb = w.pad_begin[dim], d = w.dilation[dim];
  const int64_t in = w.in[dim], out = w.out[dim], base = kidx[dim] * d - pb;
  if (dim + 1 == w.rank()) {
    for (int64_t o = 0; o < out; ++o) {
      const int64_t pos = o * s + base;
      if (pos >= 0 && pos < in) y[in_off + pos] += src[o];
    }
    return;
  }
  const int64_t block = out_block[dim];
  for (int64_t o = 0; o < out; ++o) {
    const int64_t pos = o * s + base;
    if (pos < 0 || pos >= in) continue;
    col2im_rec(src + o * block, w, kidx, in_stride, out_block, dim + 1,
               in_off + pos * in_stride[dim], y);
  }
}

// Row-major strides of the input and block sizes of the output, per spatial dimension.
void window_strides(const Window& w, Shape* in_stride, Shape* out_block) {
  const size_t r = w.rank();
  in_stride->assign(r, 1);
  out_block->assign(r, 1);
  for (size_t i = r; i-- > 1;) {
    (*in_stride)[i - 1] = (*in_stride)[i] * w.in[i];
    (*out_block)[i - 1] = (*out_block)[i] * w.out[i];
  }
}

// Calls f(k, kidx) for each kernel offset in row-major order.
template <class F>
void for_each_kernel_offset(const Window& w, F&& f) {
  const size_t r = w.rank();
  Shape kidx(r, 0);
  const int64_t total = w.kernel_size();
  for (int64_t k = 0; k < total; ++k) {
    f(k, kidx);
    for (size_t d = r; d-- > 0;) {
      if (++kidx[d] < w.kernel[d]) break;
      kidx[d] = 0;
    }
  }
}

}  // namespace

std::string dtype_str(DType t) { return std::string(dtype_name(t)); }

bool broadcastable_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

Result<int64_t> checked_numel(const Shape& shape, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return invalid_argument(std::string(what) + " has a negative dimension " +
                              shape_to_string(shape));
    }
    if (d != 0 && n > kMaxOutputElements / d) {
      return invalid_argument(std::string(what) + " " + shape_to_string(shape) + " is too large");
    }
    n *= d;
  }
  if (n > kMaxOutputElements) {
    return invalid_argument(std::string(what) + " " + shape_to_string(shape) + " is too large");
  }
  return n;
}

int64_t Window::in_size() const {
  int64_t n = 1;
  for (int64_t v : in) n *= v;
  return n;
}
int64_t Window::out_size() const {
  int64_t n = 1;
  for (int64_t v : out) n *= v;
  return n;
}
int64_t Window::kernel_size() const {
  int64_t n = 1;
  for (int64_t v : kernel) n *= v;
  return n;
}

Result<WindowAttrs> read_window_attrs(const Node& node) {
  AttrReader r(node);
  WindowAttrs a;
  a.kernel_shape = r.get_ints("kernel_shape");
  a.strides = r.get_ints("strides");
  a.dilations = r.get_ints("dilations");
  a.pads = r.get_ints("pads");
  a.auto_pad = r.get_string("auto_pad", "NOTSET");
  a.ceil_mode = r.get_int("ceil_mode", 0) != 0;
  RECUR_RETURN_IF_ERROR(r.status());
  if (a.auto_pad.empty()) a.auto_pad = "NOTSET";
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" &&
      a.auto_pad != "SAME_LOWER") {
    return invalid_model(node.describe() + ": unknown auto_pad '" + a.auto_pad + "'");
  }
  return a;
}

Result<Window> resolve_window(const WindowAttrs& a, const Shape& in_spatial, const Shape& kernel) {
  const size_t r = in_spatial.size();
  if (kernel.size() != r) {
    return invalid_argument("kernel_shape " + shape_to_string(kernel) + " has " +
                            std::to_string(kernel.size()) + " dimensions, the input has " +
                            std::to_string(r) + " spatial dimensions");
  }
  auto check_len = [&](const Shape& v, size_t want, const char* name) -> Status {
    if (!v.empty() && v.size() != want) {
      return invalid_argument(std::string(name) + " " + shape_to_string(v) + " should have " +
                              std::to_string(want) + " values");
    }
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(check_len(a.strides, r, "strides"));
  RECUR_RETURN_IF_ERROR(check_len(a.dilations, r, "dilations"));
  if (a.auto_pad == "NOTSET") RECUR_RETURN_IF_ERROR(check_len(a.pads, 2 * r, "pads"));
  Window w;
  w.in = in_spatial;
  w.kernel = kernel;
  w.stride = a.strides.empty() ? Shape(r, 1) : a.strides;
  w.dilation = a.dilations.empty() ? Shape(r, 1) : a.dilations;
  w.pad_begin.assign(r, 0);
  w.pad_end.assign(r, 0);
  w.out.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t k = kernel[i], s = w.stride[i], d = w.dilation[i], in = in_spatial[i];
    if (k <= 0 || k > kMaxAttr)
      return invalid_argument("kernel_shape " + shape_to_string(kernel) + " is invalid");
    if (s <= 0 || s > kMaxAttr)
      return invalid_argument("strides " + shape_to_string(w.stride) + " must be positive");
    if (d <= 0 || d > kMaxAttr) {
      return invalid_argument("dilations " + shape_to_string(w.dilation) + " must be positive");
    }
    const int64_t ek = (k - 1) * d + 1;
    if (a.auto_pad == "NOTSET") {
      if (!a.pads.empty()) {
        w.pad_begin[i] = a.pads[i];
        w.pad_end[i] = a.pads[i + r];
      }
      if (w.pad_begin[i] < 0 || w.pad_end[i] < 0 || w.pad_begin[i] > kMaxAttr ||
          w.pad_end[i] > kMaxAttr) {
        return invalid_argument("pads " + shape_to_string(a.pads) + " are invalid");
      }
      const int64_t span = in + w.pad_begin[i] + w.pad_end[i] - ek;
      if (span < 0) {
        return invalid_argument("the kernel (extent " + std::to_string(ek) + ") is larger than " +
                                "the padded input (" +
                                std::to_string(in + w.pad_begin[i] + w.pad_end[i]) +
                                ") along spatial dimension " + std::to_string(i));
      }
      int64_t out = span / s + 1;
      if (a.ceil_mode) {
        out = (span + s - 1) / s + 1;
        // The last window must start inside the input or its begin padding.
        if ((out - 1) * s >= in + w.pad_begin[i]) --out;
      }
      w.out[i] = out;
    } else if (a.auto_pad == "VALID") {
      const int64_t span = in - ek;
      if (span < 0) {
        return invalid_argument("the kernel (extent " + std::to_string(ek) +
                                ") is larger than the input (" + std::to_string(in) +
                                ") along spatial dimension " + std::to_string(i));
      }
      w.out[i] = span / s + 1;
    } else {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
      if (a.auto_pad == "SAME_UPPER") {
        w.pad_begin[i] = total / 2;
        w.pad_end[i] = total - total / 2;
      } else {
        w.pad_begin[i] = total - total / 2;
        w.pad_end[i] = total / 2;
      }
      w.out[i] = out;
    }
  }
  return w;
}

std::vector<Dim> infer_window_dims(const WindowAttrs& a, const std::vector<Dim>& in_spatial,
                                   const Shape& kernel) {
  std::vector<Dim> out(in_spatial.size());
  bool all_fixed = true;
  Shape in;
  for (const Dim& d : in_spatial) {
    all_fixed &= d.is_fixed();
    in.push_back(d.value);
  }
  if (!all_fixed) {
    // Dimensions are independent: resolve each fixed one alone.
    for (size_t i = 0; i < in_spatial.size(); ++i) {
      if (!in_spatial[i].is_fixed() || kernel.size() != in_spatial.size()) continue;
      WindowAttrs one;
      one.auto_pad = a.auto_pad;
      one.ceil_mode = a.ceil_mode;
      if (a.strides.size() == in.size()) one.strides = {a.strides[i]};
      if (a.dilations.size() == in.size()) one.dilations = {a.dilations[i]};
      if (a.pads.size() == 2 * in.size()) one.pads = {a.pads[i], a.pads[i + in.size()]};
      auto w = resolve_window(one, {in[i]}, {kernel[i]});
      if (w.ok()) out[i].value = w->out[0];
    }
    return out;
  }
  auto w = resolve_window(a, in, kernel);
  if (w.ok()) {
    for (size_t i = 0; i < out.size(); ++i) out[i].value = w->out[i];
  }
  return out;
}

template <class T>
void im2col(const T* x, int64_t channels, const Window& w, T pad, T* col) {
  Shape in_stride, out_block;
  window_strides(w, &in_stride, &out_block);
  const int64_t K = w.kernel_size(), P = w.out_size(), in_size = w.in_size();
  for (int64_t c = 0; c < channels; ++c) {
    for_each_kernel_offset(w, [&](int64_t k, const Shape& kidx) {
      im2col_rec(x + c * in_size, w, kidx, in_stride, out_block, 0, 0, pad, col + (c * K + k) * P);
    });
  }
}

template <class T>
void col2im_add(const T* col, int64_t channels, const Window& w, T* y) {
  Shape in_stride, out_block;
  window_strides(w, &in_stride, &out_block);
  const int64_t K = w.kernel_size(), P = w.out_size(), in_size = w.in_size();
  for (int64_t c = 0; c < channels; ++c) {
    for_each_kernel_offset(w, [&](int64_t k, const Shape& kidx) {
      col2im_rec(col + (c * K + k) * P, w, kidx, in_stride, out_block, 0, 0, y + c * in_size);
    });
  }
}

template <class T>
void matmul_overwrite(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if constexpr (std::is_floating_point_v<T>) {
    gemm<T>(false, false, m, n, k, T(1), a, k, b, n, T(0), c, n);
  } else {
    Shape acc(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t av = a[i * k + kk];
        if (av == 0) continue;
        const T* bk = b + kk * n;
        for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] += av * bk[j];
      }
      for (int64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<T>(acc[static_cast<size_t>(j)]);
    }
  }
}

template <class T>
void matmul_int_wrapping(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
                         const T* b, T* c) {
  // Unsigned 64-bit arithmetic wraps; the final narrowing keeps the low bits, as numpy does.
  auto u = [](T v) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    } else {
      return static_cast<uint64_t>(v);
    }
  };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      uint64_t acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const T av = trans_a ? a[kk * m + i] : a[i * k + kk];
        const T bv = trans_b ? b[j * k + kk] : b[kk * n + j];
        acc += u(av) * u(bv);
      }
      c[i * n + j] = static_cast<T>(acc);
    }
  }
}

template <class T>
void conv_forward(const T* x, const T* w, int64_t n, int64_t c, int64_t m, int64_t group,
                  const Window& win, T pad, T* y) {
  const int64_t cg = c / group, mg = m / group;
  const int64_t K = cg * win.kernel_size(), P = win.out_size(), in_size = win.in_size();
  bool pointwise = true;
  for (size_t i = 0; i < win.rank(); ++i) {
    pointwise &=
        win.kernel[i] == 1 && win.stride[i] == 1 && win.pad_begin[i] == 0 && win.pad_end[i] == 0;
  }
  // The columns of one group, kept by each thread from run to run: a convolution of a shape
  // it has run before allocates nothing.
  thread_local std::vector<T> col;
  if (!pointwise) col.resize(static_cast<size_t>(K * P));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t g = 0; g < group; ++g) {
      const T* xg = x + (b * c + g * cg) * in_size;
      const T* cols = xg;
      if (!pointwise) {
        im2col(xg, cg, win, pad, col.data());
        cols = col.data();
      }
      matmul_overwrite(mg, P, K, w + g * mg * K, cols, y + (b * m + g * mg) * P);
    }
  }
}

#define RECUR_NN_INSTANTIATE(T)                                                         \
  template void im2col<T>(const T*, int64_t, const Window&, T, T*);                     \
  template void col2im_add<T>(const T*, int64_t, const Window&, T*);                    \
  template void matmul_overwrite<T>(int64_t, int64_t, int64_t, const T*, const T*, T*); \
  template void conv_forward<T>(const T*, const T*, int64_t, int64_t, int64_t, int64_t, \
                                const Window&, T, T*);
RECUR_NN_INSTANTIATE(float)
RECUR_NN_INSTANTIATE(double)
RECUR_NN_INSTANTIATE(int32_t)
#undef RECUR_NN_INSTANTIATE

#define RECUR_NN_INSTANTIATE_INT(T)                                                               \
  template void matmul_int_wrapping<T>(bool, bool, int64_t, int64_t, int64_t, const T*, const T*, \
                                       T*);
RECUR_NN_INSTANTIATE_INT(int8_t)
RECUR_NN_INSTANTIATE_INT(int16_t)
RECUR_NN_INSTANTIATE_INT(int32_t)
RECUR_NN_INSTANTIATE_INT(int64_t)
RECUR_NN_INSTANTIATE_INT(uint8_t)
RECUR_NN_INSTANTIATE_INT(uint16_t)
RECUR_NN_INSTANTIATE_INT(uint32_t)
RECUR_NN_INSTANTIATE_INT(uint64_t)
#undef RECUR_NN_INSTANTIATE_INT

}  // namespace recur::reference

namespace recur::reference {

PoolPlan make_pool_plan(const Window& w) {
  const size_t r = w.rank();
  Shape in_stride(r, 1);
  for (size_t i = r; i-- > 1;) in_stride[i - 1] = in_stride[i] * w.in[i];
  PoolPlan plan;
  plan.begin.resize(r);
  plan.offs.resize(r);
  plan.padded.resize(r);
  for (size_t d = 0; d < r; ++d) {
    plan.begin[d].reserve(static_cast<size_t>(w.out[d] + 1));
    plan.padded[d].reserve(static_cast<size_t>(w.out[d]));
    plan.begin[d].push_back(0);
    for (int64_t o = 0; o < w.out[d]; ++o) {
      int64_t count = 0;
      for (int64_t k = 0; k < w.kernel[d]; ++k) {
        const int64_t pos = o * w.stride[d] - w.pad_begin[d] + k * w.dilation[d];
        if (pos < w.in[d] + w.pad_end[d]) ++count;
        if (pos >= 0 && pos < w.in[d]) plan.offs[d].push_back(pos * in_stride[d]);
      }
      plan.padded[d].push_back(count);
      plan.begin[d].push_back(static_cast<int64_t>(plan.offs[d].size()));
    }
  }
  return plan;
}

Result<PoolShapes> resolve_pool(const WindowAttrs& attrs, const Shape& x) {
  if (x.size() < 3) {
    return invalid_argument("X must have rank >= 3 ([N, C, spatial...]), got " +
                            shape_to_string(x));
  }
  if (attrs.kernel_shape.size() != x.size() - 2) {
    return invalid_argument("kernel_shape has " + std::to_string(attrs.kernel_shape.size()) +
                            " values for " + std::to_string(x.size() - 2) + " spatial dimensions");
  }
  PoolShapes s;
  s.nc = x[0] * x[1];
  RECUR_ASSIGN_OR_RETURN(s.win,
                         resolve_window(attrs, Shape(x.begin() + 2, x.end()), attrs.kernel_shape));
  s.y = {x[0], x[1]};
  s.y.insert(s.y.end(), s.win.out.begin(), s.win.out.end());
  RECUR_RETURN_IF_ERROR(checked_numel(s.y, "the output shape").status());
  // The plan holds kernel[d] offsets per output coordinate of each dimension: bound it well
  // below memory.
  int64_t offsets = 0;
  for (size_t d = 0; d < s.win.rank(); ++d) {
    RECUR_ASSIGN_OR_RETURN(int64_t n,
                           checked_numel({s.win.out[d], s.win.kernel[d]}, "the pooling plan"));
    offsets += n;
    if (offsets > (int64_t{1} << 28)) {
      return invalid_argument("the pooling windows' plan needs " + std::to_string(offsets) +
                              "+ offsets, too many");
    }
  }
  return s;
}

Status infer_pool(InferContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  TypeInfo out;
  out.dtype = x.dtype;
  if (x.has_rank() && x.rank() >= 3) {
    auto a = read_window_attrs(ctx.node());
    if (!a.ok()) return a.status();
    std::vector<Dim> dims{(*x.shape)[0], (*x.shape)[1]};
    const std::vector<Dim> in(x.shape->begin() + 2, x.shape->end());
    if (a->kernel_shape.size() == in.size()) {
      for (const Dim& d : infer_window_dims(*a, in, a->kernel_shape)) dims.push_back(d);
    } else {
      dims.resize(x.shape->size());
    }
    out.shape = dims;
  }
  ctx.set_output(0, out);
  if (ctx.num_outputs() > 1 && ctx.node().has_output(1)) {
    out.dtype = DType::kInt64;
    ctx.set_output(1, out);
  }
  return ok_status();
}

}  // namespace recur::reference

namespace recur::reference {

Result<std::vector<double>> read_as_double(const Tensor& t, const std::string& what) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  const bool ok = visit_dtype(kNnFloatTypes, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<double>(static_cast<compute_t<T>>(p[i]));
  });
  if (!ok) return invalid_argument(what + " has unsupported dtype " + dtype_str(t.dtype()));
  return v;
}

void write_from_double(const std::vector<double>& v, Tensor& t) {
  visit_dtype(kNnFloatTypes, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(static_cast<compute_t<T>>(v[i]));
  });
}

}  // namespace recur::reference
