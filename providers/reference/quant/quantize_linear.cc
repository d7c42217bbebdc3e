// QuantizeLinear (opsets 10, 13, 19, 21, 23, 24, 25): y = saturate(round_half_even(x / scale) +
// zero_point), per tensor, (13) per axis or (21) per block. y has the type of `output_dtype`
// (21) or of the zero point, uint8 by default: uint8/int8, (19) the float8 types, where
// x / scale + zero_point is converted with `saturate`, (21) uint16/int16 and uint4/int4, (23)
// float4e2m1, converted like the float8 types but always saturating, and (25) uint2/int2. From
// 23 the division is done in `precision`, by default the scale's type: float16 or bfloat16
// round x, the scale and the quotient to that type. The scale may be float8e8m0 from 24.
#include <algorithm>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

namespace {

inline constexpr auto kQuantTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t, Float4E2M1>{} +
                                    kInt4Types + kInt2Types + kFloat8Types;

struct QuantizeAttrs {
  int64_t axis = 1;
  int64_t block_size = 0;
  DType output_dtype = DType::kUndefined;  // from the zero point
  bool saturate = true;
  DType precision = DType::kUndefined;  // from the scale
};

bool output_allowed(DType t, int opset) {
  if (t == DType::kUInt8 || t == DType::kInt8) return true;
  if (t == DType::kFloat8E8M0) return false;
  if (is_float8(t)) return opset >= 19;
  if (t == DType::kFloat4E2M1) return opset >= 23;
  if (t == DType::kUInt2 || t == DType::kInt2) return opset >= 25;
  return opset >= 21 &&
         (t == DType::kUInt16 || t == DType::kInt16 || t == DType::kUInt4 || t == DType::kInt4);
}

// The type the division is rounded to: float32 (what recur computed in before opset 23, and
// what an int32 or float8e8m0 scale divides in), float16 or bfloat16.
DType division_type(const QuantizeAttrs& a, DType scale, int opset) {
  if (opset < 23) return DType::kFloat32;
  const DType p = a.precision != DType::kUndefined ? a.precision : scale;
  return p == DType::kFloat16 || p == DType::kBFloat16 ? p : DType::kFloat32;
}

float round_to(float v, DType t) {
  if (t == DType::kFloat16) return static_cast<float>(Float16(v));
  if (t == DType::kBFloat16) return static_cast<float>(BFloat16(v));
  return v;
}

// y's dtype from the attributes and the zero point's dtype (kUndefined: no zero point).
DType output_type(const QuantizeAttrs& a, DType zero_point) {
  if (a.output_dtype != DType::kUndefined) return a.output_dtype;
  return zero_point != DType::kUndefined ? zero_point : DType::kUInt8;
}

// `scaled` is x / scale, already rounded to the division's type.
template <class Q>
Q quantize_one(float scaled, float zero_point, bool saturate) {
  if constexpr (is_float8_v<Q>) {
    return Q(scaled + zero_point, saturate);
  } else if constexpr (is_float4_v<Q>) {
    return Q(scaled + zero_point);
  } else if constexpr (is_int4_v<Q> || is_int2_v<Q>) {
    constexpr bool is_signed_type = std::is_same_v<Q, Int4> || std::is_same_v<Q, Int2>;
    constexpr float range = is_int4_v<Q> ? 16.0f : 4.0f;
    const float lo = is_signed_type ? -range / 2 : 0.0f;
    const float hi = is_signed_type ? range / 2 - 1 : range - 1;
    const float v = std::nearbyint(scaled) + zero_point;
    Q q;
    q.value = static_cast<decltype(q.value)>(std::isnan(v) ? lo : std::clamp(v, lo, hi));
    return q;
  } else {
    return saturate_round<Q>(std::nearbyint(scaled) + zero_point);
  }
}

class QuantizeLinearKernel final : public Kernel {
 public:
  explicit QuantizeLinearKernel(QuantizeAttrs a) : a_(a) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    const Tensor* zp = ctx.input(2);
    const int opset = ctx.node().opset;
    const DType out = output_type(a_, zp ? zp->dtype() : DType::kUndefined);
    if (zp && zp->dtype() != out) {
      return invalid_argument("y_zero_point is " + std::string(dtype_name(zp->dtype())) +
                              " but output_dtype is " + std::string(dtype_name(out)));
    }
    if (!output_allowed(out, opset)) {
      return invalid_argument("QuantizeLinear-" + std::to_string(opset) + " cannot produce " +
                              std::string(dtype_name(out)));
    }
    if (opset < 13 && scale->numel() != 1) {
      return invalid_argument("y_scale must be a scalar before opset 13");
    }
    if (scale->dtype() == DType::kFloat8E8M0 && opset < 24) {
      return invalid_argument("a float8e8m0 y_scale needs QuantizeLinear-24 or later");
    }
    const DType div = division_type(a_, scale->dtype(), opset);
    RECUR_ASSIGN_OR_RETURN(
        AxisQuant q, axis_quant(*scale, zp, x->shape(), a_.axis, opset >= 21 ? a_.block_size : 0));
    std::vector<float> xs;
    if (x->dtype() == DType::kInt32) {
      RECUR_ASSIGN_OR_RETURN(xs, read_as_float(*x, "x"));
    } else {
      RECUR_ASSIGN_OR_RETURN(xs, read_float32(*x, "x"));
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x->shape()));
    visit_dtype(kQuantTypes, out, [&](auto tag) {
      using Q = typename decltype(tag)::type;
      Q* yp = y->data<Q>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        const size_t k = q.index(i);
        const float scaled =
            round_to(round_to(xs[static_cast<size_t>(i)], div) / round_to(q.scale[k], div), div);
        yp[i] = quantize_one<Q>(scaled, q.zero_point[k], a_.saturate);
      }
    });
    return ok_status();
  }

 private:
  QuantizeAttrs a_;
};

Result<QuantizeAttrs> read_quantize_attrs(const Node& node) {
  AttrReader r(node);
  QuantizeAttrs a;
  a.axis = r.get_int("axis", 1);
  a.block_size = r.get_int("block_size", 0);
  a.output_dtype = static_cast<DType>(r.get_int("output_dtype", 0));
  a.saturate = r.get_int("saturate", 1) != 0;
  const int64_t precision = r.get_int("precision", 0);
  RECUR_RETURN_IF_ERROR(r.status());
  a.precision = static_cast<DType>(precision);
  if (precision != 0 && a.precision != DType::kFloat32 && a.precision != DType::kFloat16 &&
      a.precision != DType::kBFloat16 && a.precision != DType::kInt32) {
    return invalid_model(node.describe() + ": unsupported precision " + std::to_string(precision));
  }
  if (a.output_dtype != DType::kUndefined && !output_allowed(a.output_dtype, node.opset)) {
    return invalid_model(node.describe() + ": unsupported output_dtype " +
                         std::to_string(static_cast<int>(a.output_dtype)));
  }
  return a;
}

}  // namespace

void register_quantize_linear(Registrar& r) {
  r.add({.op_type = "QuantizeLinear",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(QuantizeAttrs a, read_quantize_attrs(ctx.node()));
           return std::make_unique<QuantizeLinearKernel>(a);
         }},
        [](InferContext& ctx) {
          TypeInfo t = ctx.input_type(0);
          auto a = read_quantize_attrs(ctx.node());
          const DType zp = ctx.has_input(2) ? ctx.input_type(2).dtype : DType::kUndefined;
          t.dtype = a.ok() ? output_type(*a, zp) : DType::kUndefined;
          ctx.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
