// Helpers shared by the nn/ and quant/ kernels: sliding-window geometry (Conv, ConvTranspose,
// pooling), im2col/col2im, batched matrix products, and float16 staging buffers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "providers/reference/common/dispatch.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/provider/kernel.h"

namespace recur::reference {

// The largest output a reference kernel allocates: far beyond any real model, small enough
// that a corrupt attribute or scale is reported instead of exhausting memory.
inline constexpr int64_t kMaxOutputElements = int64_t{1} << 32;

// The element count of `shape`, or an error if it overflows or exceeds kMaxOutputElements.
// `what` is a string_view: kernels call this on every run, with literals.
Result<int64_t> checked_numel(const Shape& shape, std::string_view what);

// Attributes of a sliding window, as read from the node (unresolved: no input shape yet).
struct WindowAttrs {
  Shape kernel_shape;  // empty: taken from the weights
  Shape strides;       // empty: all 1
  Shape dilations;     // empty: all 1
  Shape pads;          // empty: all 0; [begin..., end...]
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};

Result<WindowAttrs> read_window_attrs(const Node& node);

// A window resolved against a concrete input.
struct Window {
  Shape in, kernel, stride, dilation, pad_begin, pad_end, out;
  size_t rank() const { return in.size(); }
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// Resolves the output size of a forward window (Conv, pooling). ceil_mode (pooling) keeps
// PyTorch's rule that the last window must start inside the input or its begin padding.
Result<Window> resolve_window(const WindowAttrs& a, const Shape& in_spatial, const Shape& kernel);

// The same rule on declared dimensions, for static inference; unknown inputs give unknown
// outputs.
std::vector<Dim> infer_window_dims(const WindowAttrs& a, const std::vector<Dim>& in_spatial,
                                   const Shape& kernel);

// col[(c * K + k) * P + p] = x[c][in position of kernel offset k at output position p], or
// `pad` outside the input. K = w.kernel_size(), P = w.out_size().
template <class T>
void im2col(const T* x, int64_t channels, const Window& w, T pad, T* col);

// The adjoint of im2col: y[c][pos] += col[(c * K + k) * P + p], where `w.in` is the size of y
// (the transposed convolution's output) and `w.out` that of the columns.
template <class T>
void col2im_add(const T* col, int64_t channels, const Window& w, T* y);

// C[m x n] = A[m x k] * B[k x n], row-major, overwriting C. Floating types go through the
// shared gemm; int32 accumulates in int64 and wraps to int32.
template <class T>
void matmul_overwrite(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c);

// Integer matrix product with wrapping (numpy) overflow, for MatMul and Gemm on integers.
template <class T>
void matmul_int_wrapping(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
                         const T* b, T* c);

// Convolution of already-staged buffers: x [N, C, in...], w [M, C/group, kernel...],
// y [N, M, out...] (overwritten). T is float, double or int32_t.
template <class T>
void conv_forward(const T* x, const T* w, int64_t n, int64_t c, int64_t m, int64_t group,
                  const Window& win, T pad, T* y);

// A read-only view of a tensor's data in its compute type: the data itself for float and
// double, a converted copy for float16 and bfloat16.
template <class T>
class ComputeView {
 public:
  using C = compute_t<T>;
  explicit ComputeView(const Tensor& t) {
    const T* p = t.data<T>();
    if constexpr (std::is_same_v<T, C>) {
      ptr_ = p;
    } else {
      copy_.resize(static_cast<size_t>(t.numel()));
      for (size_t i = 0; i < copy_.size(); ++i) copy_[i] = static_cast<C>(p[i]);
      ptr_ = copy_.data();
    }
  }
  const C* data() const { return ptr_; }

 private:
  const C* ptr_ = nullptr;
  std::vector<C> copy_;
};

// A writable buffer in the compute type for an output tensor; flush() writes it back when the
// tensor's type differs.
template <class T>
class ComputeOut {
 public:
  using C = compute_t<T>;
  explicit ComputeOut(Tensor& t) : t_(t) {
    if constexpr (std::is_same_v<T, C>) {
      ptr_ = t.data<T>();
    } else {
      copy_.assign(static_cast<size_t>(t.numel()), C(0));
      ptr_ = copy_.data();
    }
  }
  C* data() { return ptr_; }
  void flush() {
    if constexpr (!std::is_same_v<T, C>) {
      T* p = t_.data<T>();
      for (size_t i = 0; i < copy_.size(); ++i) p[i] = static_cast<T>(copy_[i]);
    }
  }

 private:
  Tensor& t_;
  C* ptr_ = nullptr;
  std::vector<C> copy_;
};

// The shapes of a convolution (Conv, ConvInteger, QLinearConv), checked against each other.
struct ConvShapes {
  int64_t n = 0, c = 0, m = 0;
  Window win;
  Shape y;
};
Result<ConvShapes> check_conv_shapes(const WindowAttrs& attrs, int64_t group, const Shape& x,
                                     const Shape& w, const char* x_name, const char* w_name);
// Static inference of a convolution's output [N, M, out...]: X is input 0, W input w_index.
Status infer_conv_like(InferContext& ctx, DType out_dtype, size_t w_index = 1);

// Pooling over a window, one spatial dimension at a time: for dimension d and output coordinate
// o, the offsets (input coordinate times the dimension's stride within a channel) of the input
// positions the window covers inside the input, and how many of its taps fall inside the input
// or its padding (AveragePool's count_include_pad divisor). A window's taps are the products of
// its dimensions' lists, so the plan holds sum(out[d] * kernel[d]) offsets where listing each
// window's taps would take out_size * kernel_size (gigabytes for a wide window over a large
// image).
struct PoolPlan {
  std::vector<Shape> begin;   // [d]: out[d] + 1 offsets into offs[d]
  std::vector<Shape> offs;    // [d]
  std::vector<Shape> padded;  // [d][o]
};
PoolPlan make_pool_plan(const Window& w);

// One output position's window.
class PoolWindow {
 public:
  PoolWindow(const PoolPlan& plan, const Shape& o) : plan_(plan), o_(o) {}
  bool empty() const {
    for (size_t d = 0; d < o_.size(); ++d)
      if (lo(d) == hi(d)) return true;
    return false;
  }
  int64_t tap_count() const {
    int64_t n = 1;
    for (size_t d = 0; d < o_.size(); ++d) n *= hi(d) - lo(d);
    return n;
  }
  int64_t padded_count() const {
    int64_t n = 1;
    for (size_t d = 0; d < o_.size(); ++d) n *= plan_.padded[d][static_cast<size_t>(o_[d])];
    return n;
  }
  // The first tap's offset (row-major order); 0 for an empty window.
  int64_t first() const {
    if (empty()) return 0;
    int64_t off = 0;
    for (size_t d = 0; d < o_.size(); ++d) off += plan_.offs[d][static_cast<size_t>(lo(d))];
    return off;
  }
  // g(offset) for each tap, in row-major order.
  template <class G>
  void for_each_tap(G&& g) const {
    if (!o_.empty()) each(0, 0, g);
  }

 private:
  int64_t lo(size_t d) const { return plan_.begin[d][static_cast<size_t>(o_[d])]; }
  int64_t hi(size_t d) const { return plan_.begin[d][static_cast<size_t>(o_[d]) + 1]; }
  template <class G>
  void each(size_t d, int64_t base, G& g) const {
    const int64_t* offs = plan_.offs[d].data();
    if (d + 1 == o_.size()) {
      for (int64_t i = lo(d); i < hi(d); ++i) g(base + offs[i]);
      return;
    }
    for (int64_t i = lo(d); i < hi(d); ++i) each(d + 1, base + offs[i], g);
  }

  const PoolPlan& plan_;
  const Shape& o_;
};

// Pooling shapes: X [N, C, spatial...] with the kernel_shape attribute.
struct PoolShapes {
  int64_t nc = 0;
  Window win;
  Shape y;
};
Result<PoolShapes> resolve_pool(const WindowAttrs& attrs, const Shape& x);
// The loop every pooling kernel runs: f(xc, window, nc, p) for each (n, c) plane nc and output
// position p (row-major), where xc is the plane's input and window (a PoolWindow) the offsets
// into it that the window at p covers (padding excluded). The output element is
// nc * out_size + p.
template <class T, class F>
void for_each_pool_window(const PoolShapes& s, const PoolPlan& plan, const T* x, F&& f) {
  const int64_t in_size = s.win.in_size(), P = s.win.out_size();
  const size_t r = s.win.rank();
  Shape o(r, 0);
  const PoolWindow window(plan, o);
  for (int64_t nc = 0; nc < s.nc; ++nc) {
    const T* xc = x + nc * in_size;
    std::fill(o.begin(), o.end(), 0);
    for (int64_t p = 0; p < P; ++p) {
      f(xc, window, nc, p);
      for (size_t d = r; d-- > 0;) {
        if (++o[d] < s.win.out[d]) break;
        o[d] = 0;
      }
    }
  }
}
// Static inference of a pooling output [N, C, out...]; outputs 0 and (if present) 1 (int64).
Status infer_pool(InferContext& ctx);

// numpy matmul shapes: 1-D promotion and batch broadcasting (MatMul, MatMulInteger,
// QLinearMatMul).
struct MatMulShapes {
  int64_t m = 0, k = 0, n = 0;
  Shape a_batch, b_batch, batch, y;
};
Result<MatMulShapes> matmul_shapes(const Shape& a, const Shape& b);
Status infer_matmul_like(InferContext& ctx, DType out_dtype, size_t a_index, size_t b_index);

// The values of a floating-point tensor as doubles (normalisation parameters).
Result<std::vector<double>> read_as_double(const Tensor& t, const std::string& what);
// Writes doubles into a floating-point tensor of any supported type.
void write_from_double(const std::vector<double>& v, Tensor& t);

// Resize and Upsample.
struct ResizeParams {
  enum class Mode { kNearest, kLinear, kCubic };
  Mode mode = Mode::kNearest;
  std::string coordinate_mode = "half_pixel";
  // round_prefer_floor, round_prefer_ceil, floor, ceil; "simple" is the rule before Resize-11:
  // truncate when upsampling, ceil when downsampling.
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  // Resize-18: when downsampling, linear and cubic widen their filter by 1 / scale.
  bool antialias = false;
};
// Resizes x into a tensor of shape `out` allocated as output 0. `scales` are per axis
// (output / input where given by sizes); `roi` is [starts..., ends...] or empty.
Status resize_into(KernelContext& ctx, const ResizeParams& p, const Tensor& x,
                   const std::vector<double>& scales, const Shape& out,
                   const std::vector<double>& roi);
// The output shape floor(in * scale), checked: positive finite scales, no huge outputs.
Result<Shape> resize_shape_from_scales(const Shape& in, const std::vector<double>& scales);

// The floating types the nn kernels accept.
inline constexpr TypeList<float, double, Float16, BFloat16> kNnFloatTypes{};

std::string dtype_str(DType t);

// Unidirectional broadcast check: can `from` broadcast to `to`?
bool broadcastable_to(const Shape& from, const Shape& to);

}  // namespace recur::reference
