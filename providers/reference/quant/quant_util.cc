#include "providers/reference/quant/quant_util.h"

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"

namespace recur::reference {

Result<std::vector<int32_t>> read_quantized(const Tensor& t, const std::string& what) {
  std::vector<int32_t> v(static_cast<size_t>(t.numel()));
  const bool ok = visit_dtype(kIntTypes + kInt4Types + kInt2Types, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (is_int4_v<T> || is_int2_v<T>) {
        v[i] = p[i].value;
      } else {
        v[i] = static_cast<int32_t>(p[i]);
      }
    }
  });
  const DType d = t.dtype();
  if (!ok || d == DType::kInt64 || d == DType::kUInt32 || d == DType::kUInt64) {
    return invalid_argument(what + " must be a 2-, 4-, 8- or 16-bit integer or int32, not " +
                            std::string(dtype_name(d)));
  }
  return v;
}

Result<std::vector<float>> read_float32(const Tensor& t, const std::string& what) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  const bool ok = visit_dtype(TypeList<float, Float16, BFloat16>{}, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(p[i]);
  });
  if (!ok) {
    return invalid_argument(what + " must be float32, float16 or bfloat16, not " +
                            std::string(dtype_name(t.dtype())));
  }
  return v;
}

Result<std::vector<float>> read_as_float(const Tensor& t, const std::string& what) {
  if (t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat16 ||
      t.dtype() == DType::kBFloat16) {
    return read_float32(t, what);
  }
  std::vector<float> v(static_cast<size_t>(t.numel()));
  if (is_float8(t.dtype()) || is_float4(t.dtype())) {
    visit_dtype(kFloat8Types + kMxFloatTypes, t.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(p[i]);
    });
    return v;
  }
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> q, read_quantized(t, what));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(q[i]);
  return v;
}

namespace {

// Checks a blocked scale: x's shape with dimension `ax` shrunk to ceil(x[ax] / block).
Status check_blocked_scale(const Shape& s, const Shape& x, size_t ax, int64_t block) {
  bool ok = s.size() == x.size();
  for (size_t d = 0; ok && d < x.size(); ++d) {
    ok = d == ax ? s[d] == (x[d] + block - 1) / block : s[d] == x[d];
  }
  if (!ok) {
    return invalid_argument("the blocked scale " + shape_to_string(s) + " does not match x " +
                            shape_to_string(x) + " with block_size " + std::to_string(block) +
                            " on axis " + std::to_string(ax));
  }
  return ok_status();
}

}  // namespace

Result<AxisQuant> axis_quant(const Tensor& scale, const Tensor* zero_point, const Shape& x,
                             int64_t axis, int64_t block_size) {
  AxisQuant q;
  if (scale.dtype() == DType::kFloat8E8M0) {  // the MX scale of opset 24
    RECUR_ASSIGN_OR_RETURN(q.scale, read_as_float(scale, "the scale"));
  } else {
    RECUR_ASSIGN_OR_RETURN(q.scale, read_float32(scale, "the scale"));
  }
  if (block_size < 0) return invalid_argument("block_size must not be negative");
  if (block_size > 0 || scale.numel() != 1) {
    if (block_size == 0 && scale.rank() != 1) {
      return invalid_argument("the scale must be a scalar or 1-D, got " +
                              shape_to_string(scale.shape()));
    }
    RECUR_ASSIGN_OR_RETURN(int64_t ax,
                           normalize_axis(axis, static_cast<int64_t>(x.size()), "axis"));
    const auto a = static_cast<size_t>(ax);
    if (block_size > 0) {
      RECUR_RETURN_IF_ERROR(check_blocked_scale(scale.shape(), x, a, block_size));
      q.len = scale.dim(ax);
      q.block = block_size;
      q.dim = x[a];
    } else if (scale.dim(0) != x[a]) {
      return invalid_argument("the scale has " + std::to_string(scale.dim(0)) +
                              " values, but axis " + std::to_string(axis) + " of " +
                              shape_to_string(x) + " has " + std::to_string(x[a]));
    } else {
      q.len = scale.dim(0);
    }
    for (size_t d = a + 1; d < x.size(); ++d) q.inner *= x[d];
  }
  if (zero_point) {
    if (zero_point->numel() != scale.numel()) {
      return invalid_argument("the zero point " + shape_to_string(zero_point->shape()) +
                              " does not match the scale " + shape_to_string(scale.shape()));
    }
    RECUR_ASSIGN_OR_RETURN(q.zero_point, read_as_float(*zero_point, "the zero point"));
  } else {
    q.zero_point.assign(q.scale.size(), 0.0f);
  }
  return q;
}

Result<std::vector<int32_t>> matrix_zero_point(const Tensor* zp, int64_t rows, int64_t batches,
                                               const std::string& what) {
  if (!zp) return std::vector<int32_t>{0};
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> v, read_quantized(*zp, what));
  const auto n = static_cast<int64_t>(v.size());
  if (n != 1 && n != rows && n != rows * batches) {
    return invalid_argument(what + " " + shape_to_string(zp->shape()) +
                            " must be a scalar or have one value per row");
  }
  return v;
}

}  // namespace recur::reference

#include "providers/reference/common/broadcast.h"

namespace recur::reference {

Result<QuantMatMul> quantized_matmul(const Tensor& a, const Tensor* a_zp, const Tensor& b,
                                     const Tensor* b_zp) {
  QuantMatMul r;
  RECUR_ASSIGN_OR_RETURN(r.shapes, matmul_shapes(a.shape(), b.shape()));
  const MatMulShapes& s = r.shapes;
  if (a.dtype() != DType::kUInt8 && a.dtype() != DType::kInt8) {
    return invalid_argument("A must be uint8 or int8, not " + std::string(dtype_name(a.dtype())));
  }
  if (b.dtype() != DType::kUInt8 && b.dtype() != DType::kInt8) {
    return invalid_argument("B must be uint8 or int8, not " + std::string(dtype_name(b.dtype())));
  }
  if ((a_zp && a_zp->dtype() != a.dtype()) || (b_zp && b_zp->dtype() != b.dtype())) {
    return invalid_argument("a zero point must have the dtype of its input");
  }
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> av, read_quantized(a, "A"));
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> bv, read_quantized(b, "B"));
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> az,
                         matrix_zero_point(a_zp, s.m, shape_numel(s.a_batch), "a_zero_point"));
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> bz,
                         matrix_zero_point(b_zp, s.n, shape_numel(s.b_batch), "b_zero_point"));
  const int64_t mk = s.m * s.k, kn = s.k * s.n, mn = s.m * s.n;
  r.acc.resize(static_cast<size_t>(shape_numel(s.y)));
  std::vector<int32_t> am(static_cast<size_t>(mk)), bm(static_cast<size_t>(kn));
  auto zp_at = [](const std::vector<int32_t>& z, int64_t batch, int64_t row, int64_t rows) {
    if (z.size() == 1) return z[0];
    if (static_cast<int64_t>(z.size()) == rows) return z[static_cast<size_t>(row)];
    return z[static_cast<size_t>(batch * rows + row)];
  };
  for_each_broadcast<2>(
      s.batch, {&s.a_batch, &s.b_batch}, [&](int64_t i, const std::array<int64_t, 2>& off) {
        for (int64_t m = 0; m < s.m; ++m)
          for (int64_t k = 0; k < s.k; ++k) {
            am[static_cast<size_t>(m * s.k + k)] =
                av[static_cast<size_t>(off[0] * mk + m * s.k + k)] - zp_at(az, off[0], m, s.m);
          }
        for (int64_t k = 0; k < s.k; ++k)
          for (int64_t n = 0; n < s.n; ++n) {
            bm[static_cast<size_t>(k * s.n + n)] =
                bv[static_cast<size_t>(off[1] * kn + k * s.n + n)] - zp_at(bz, off[1], n, s.n);
          }
        matmul_overwrite<int32_t>(s.m, s.n, s.k, am.data(), bm.data(), r.acc.data() + i * mn);
      });
  return r;
}

}  // namespace recur::reference

namespace recur::reference {

Result<QuantConv> quantized_conv(const WindowAttrs& attrs, int64_t group, const Tensor& x,
                                 const Tensor* x_zp, const Tensor& w, const Tensor* w_zp) {
  QuantConv r;
  RECUR_ASSIGN_OR_RETURN(r.shapes, check_conv_shapes(attrs, group, x.shape(), w.shape(), "x", "w"));
  const ConvShapes& s = r.shapes;
  if (x.dtype() != DType::kUInt8 && x.dtype() != DType::kInt8) {
    return invalid_argument("x must be uint8 or int8, not " + std::string(dtype_name(x.dtype())));
  }
  if (w.dtype() != DType::kUInt8 && w.dtype() != DType::kInt8) {
    return invalid_argument("w must be uint8 or int8, not " + std::string(dtype_name(w.dtype())));
  }
  if ((x_zp && x_zp->dtype() != x.dtype()) || (w_zp && w_zp->dtype() != w.dtype())) {
    return invalid_argument("a zero point must have the dtype of its input");
  }
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> xv, read_quantized(x, "x"));
  RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> wv, read_quantized(w, "w"));
  int32_t xz = 0;
  if (x_zp) {
    if (x_zp->numel() != 1) return invalid_argument("x_zero_point must be a scalar");
    RECUR_ASSIGN_OR_RETURN(std::vector<int32_t> z, read_quantized(*x_zp, "x_zero_point"));
    xz = z[0];
  }
  std::vector<int32_t> wz{0};
  if (w_zp) {
    RECUR_ASSIGN_OR_RETURN(wz, read_quantized(*w_zp, "w_zero_point"));
    if (wz.size() != 1 && static_cast<int64_t>(wz.size()) != s.m) {
      return invalid_argument(
          "w_zero_point must be a scalar or have one value per output "
          "channel (" +
          std::to_string(s.m) + ")");
    }
  }
  for (int32_t& v : xv) v -= xz;
  const int64_t per_m = s.m == 0 ? 0 : static_cast<int64_t>(wv.size()) / s.m;
  for (size_t i = 0; i < wv.size(); ++i) {
    wv[i] -= wz.size() == 1 ? wz[0] : wz[i / static_cast<size_t>(per_m)];
  }
  r.acc.resize(static_cast<size_t>(shape_numel(s.y)));
  conv_forward<int32_t>(xv.data(), wv.data(), s.n, s.c, s.m, group, s.win, 0, r.acc.data());
  return r;
}

}  // namespace recur::reference
