// DequantizeLinear (opsets 10, 13, 19, 21, 23, 24, 25): y = (x - zero_point) * scale, per
// tensor, (13) per axis or (21) per block. x is uint8/int8/int32, (19) a float8 type, (21)
// uint16/int16 or uint4/int4, (23) float4e2m1, (25) uint2/int2; y has the type of
// `output_dtype` (23) or else the scale's (float32, and from 19 float16 or bfloat16), computed
// in float32 and rounded once. The scale may be float8e8m0 from 24, with an output_dtype.
#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/quant/quant_ops.h"
#include "providers/reference/quant/quant_util.h"

namespace recur::reference {

namespace {

bool input_allowed(DType t, int opset) {
  if (t == DType::kUInt8 || t == DType::kInt8 || t == DType::kInt32) return true;
  if (t == DType::kFloat8E8M0) return false;
  if (is_float8(t)) return opset >= 19;
  if (t == DType::kFloat4E2M1) return opset >= 23;
  if (t == DType::kUInt2 || t == DType::kInt2) return opset >= 25;
  return opset >= 21 &&
         (t == DType::kUInt16 || t == DType::kInt16 || t == DType::kUInt4 || t == DType::kInt4);
}

class DequantizeLinearKernel final : public Kernel {
 public:
  DequantizeLinearKernel(int64_t axis, int64_t block_size, DType output_dtype)
      : axis_(axis), block_size_(block_size), output_dtype_(output_dtype) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
    const Tensor* zp = ctx.input(2);
    const int opset = ctx.node().opset;
    if (zp && zp->dtype() != x->dtype()) {
      return invalid_argument("x_zero_point must have the dtype of x");
    }
    if (!input_allowed(x->dtype(), opset)) {
      return invalid_argument("DequantizeLinear-" + std::to_string(opset) + " cannot read " +
                              std::string(dtype_name(x->dtype())));
    }
    if (opset < 13 && scale->numel() != 1) {
      return invalid_argument("x_scale must be a scalar before opset 13");
    }
    if (opset < 19 && scale->dtype() != DType::kFloat32) {
      return invalid_argument("x_scale must be float32 before opset 19");
    }
    if (scale->dtype() == DType::kFloat8E8M0 && opset < 24) {
      return invalid_argument("a float8e8m0 x_scale needs DequantizeLinear-24 or later");
    }
    const DType out = output_dtype_ != DType::kUndefined ? output_dtype_ : scale->dtype();
    if (out != DType::kFloat32 && out != DType::kFloat16 && out != DType::kBFloat16) {
      return invalid_argument("y would be " + std::string(dtype_name(out)) +
                              "; a float8e8m0 x_scale needs output_dtype");
    }
    RECUR_ASSIGN_OR_RETURN(std::vector<float> xs, read_as_float(*x, "x"));
    RECUR_ASSIGN_OR_RETURN(
        AxisQuant q, axis_quant(*scale, zp, x->shape(), axis_, opset >= 21 ? block_size_ : 0));
    if (x->dtype() == DType::kInt32) {
      for (float z : q.zero_point) {
        if (z != 0) return invalid_argument("the zero point of int32 input must be 0");
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x->shape()));
    visit_dtype(TypeList<float, Float16, BFloat16>{}, out, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* yp = y->data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) {
        const size_t k = q.index(i);
        yp[i] = static_cast<T>((xs[static_cast<size_t>(i)] - q.zero_point[k]) * q.scale[k]);
      }
    });
    return ok_status();
  }

 private:
  int64_t axis_;
  int64_t block_size_;
  DType output_dtype_;
};

// `output_dtype` (23): 0 for the scale's type.
Result<DType> read_output_dtype(const Node& node) {
  AttrReader r(node);
  const int64_t code = r.get_int("output_dtype", 0);
  RECUR_RETURN_IF_ERROR(r.status());
  const auto t = static_cast<DType>(code);
  if (code != 0 && t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16) {
    return invalid_model(node.describe() + ": output_dtype " + std::to_string(code) +
                         " is not float, float16 or bfloat16");
  }
  return t;
}

}  // namespace

void register_dequantize_linear(Registrar& r) {
  r.add({.op_type = "DequantizeLinear",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t axis = r.get_int("axis", 1);
           const int64_t block_size = r.get_int("block_size", 0);
           RECUR_RETURN_IF_ERROR(r.status());
           RECUR_ASSIGN_OR_RETURN(DType output_dtype, read_output_dtype(ctx.node()));
           return std::make_unique<DequantizeLinearKernel>(axis, block_size, output_dtype);
         }},
        [](InferContext& ctx) {
          TypeInfo t = ctx.input_type(0);
          const DType s = ctx.input_type(1).dtype;
          auto o = read_output_dtype(ctx.node());
          if (o.ok() && *o != DType::kUndefined) {
            t.dtype = *o;
          } else {
            t.dtype = s == DType::kUndefined ? DType::kFloat32 : s;
          }
          ctx.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
