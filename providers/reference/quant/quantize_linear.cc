// QuantizeLinear (opsets 10, 13, 19, 21): y = saturate(round_half_even(x / scale) + zero_point),
// per tensor, (13) per axis or (21) per block. y has the type of `output_dtype` (21) or of the
// zero point, uint8 by default: uint8/int8, (19) the float8 types, where x / scale + zero_point
// is converted with `saturate`, and (21) uint16/int16 and uint4/int4.
#include <algorithm>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

namespace {

inline constexpr auto kQuantTypes =
    TypeList<uint8_t, int8_t, uint16_t, int16_t>{} + kInt4Types + kFloat8Types;

struct QuantizeAttrs {
  int64_t axis = 1;
  int64_t block_size = 0;
  DType output_dtype = DType::kUndefined;  // from the zero point
  bool saturate = true;
};

bool output_allowed(DType t, int opset) {
  if (t == DType::kUInt8 || t == DType::kInt8) return true;
  if (is_float8(t)) return opset >= 19;
  return opset >= 21 &&
         (t == DType::kUInt16 || t == DType::kInt16 || t == DType::kUInt4 || t == DType::kInt4);
}

// y's dtype from the attributes and the zero point's dtype (kUndefined: no zero point).
DType output_type(const QuantizeAttrs& a, DType zero_point) {
  if (a.output_dtype != DType::kUndefined) return a.output_dtype;
  return zero_point != DType::kUndefined ? zero_point : DType::kUInt8;
}

template <class Q>
Q quantize_one(float x, float scale, float zero_point, bool saturate) {
  if constexpr (is_float8_v<Q>) {
    return Q(x / scale + zero_point, saturate);
  } else if constexpr (is_int4_v<Q>) {
    const float lo = std::is_same_v<Q, Int4> ? -8.0f : 0.0f;
    const float hi = std::is_same_v<Q, Int4> ? 7.0f : 15.0f;
    const float v = std::nearbyint(x / scale) + zero_point;
    Q q;
    q.value = static_cast<decltype(q.value)>(std::isnan(v) ? lo : std::clamp(v, lo, hi));
    return q;
  } else {
    return saturate_round<Q>(std::nearbyint(x / scale) + zero_point);
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
        yp[i] =
            quantize_one<Q>(xs[static_cast<size_t>(i)], q.scale[k], q.zero_point[k], a_.saturate);
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
  RECUR_RETURN_IF_ERROR(r.status());
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
