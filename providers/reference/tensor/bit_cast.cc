// BitCast (opset 26): the input's bits reinterpreted as dtype `to`, of the same bit width; the
// shape is unchanged.
#include <cstring>
#include <optional>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_ops.h"
#include "runtime/core/copy_bytes.h"

namespace recur::reference {

namespace {

// The bit width of the dtypes BitCast takes, nullopt for the others. A list rather than
// dtype_size: a dtype held in more bits than it has (int4, one per byte) must not be counted
// by its storage, and a dtype added later stays refused until it is listed here.
std::optional<int> bit_width(DType t) {
  switch (t) {
    case DType::kInt2:
    case DType::kUInt2:
      return 2;
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      return 8;
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 16;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32:
      return 32;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat64:
      return 64;
    default:
      return std::nullopt;
  }
}

class BitCastKernel final : public Kernel {
 public:
  explicit BitCastKernel(DType to) : to_(to) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    const DType from = x->dtype();
    const std::optional<int> bits = bit_width(from);
    if (!bits) {
      return invalid_argument("cannot bitcast from " + std::string(dtype_name(from)));
    }
    if (*bits != *bit_width(to_)) {
      return invalid_argument("cannot bitcast " + std::string(dtype_name(from)) + " (" +
                              std::to_string(*bits) + " bits) to " + std::string(dtype_name(to_)) +
                              " (" + std::to_string(*bit_width(to_)) + " bits): the widths differ");
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to_, x->shape()));
    const int64_t n = x->numel();
    if (n == 0) return ok_status();
    if (to_ == DType::kBool) {
      // A bool byte must hold 0 or 1; any other bit pattern reads as true.
      const auto* px = static_cast<const uint8_t*>(x->raw_data());
      bool* py = y->data<bool>();
      for (int64_t i = 0; i < n; ++i) py[i] = px[i] != 0;
    } else if (*bits < 8) {
      // One element a byte: the unsigned types and float4e2m1's code keep the low bits, int4
      // and int2 sign-extend them.
      const auto* px = static_cast<const uint8_t*>(x->raw_data());
      auto* py = static_cast<uint8_t*>(y->raw_data());
      const auto mask = static_cast<uint8_t>((1u << *bits) - 1);
      const auto sign = static_cast<uint8_t>(1u << (*bits - 1));
      const bool is_signed = to_ == DType::kInt4 || to_ == DType::kInt2;
      for (int64_t i = 0; i < n; ++i) {
        const auto v = static_cast<uint8_t>(px[i] & mask);
        py[i] = is_signed && (v & sign) != 0 ? static_cast<uint8_t>(v | ~mask) : v;
      }
    } else {
      // Tensors are held in the host's order, which recur requires to be little endian, the
      // order the operator is defined on.
      copy_bytes(y->raw_data(), x->raw_data(), x->nbytes());
    }
    return ok_status();
  }

 private:
  DType to_;
};

Result<DType> bit_cast_target(const Node& node) {
  AttrReader attrs(node);
  const int64_t code = attrs.require_int("to");
  RECUR_RETURN_IF_ERROR(attrs.status());
  const auto to = static_cast<DType>(code);
  if (code < 0 || code > 0x7fffffff || !bit_width(to)) {
    return not_implemented(node.describe() + ": cannot bitcast to type code " +
                           std::to_string(code) +
                           (code >= 0 && code <= 0x7fffffff && dtype_name(to) != "undefined"
                                ? " (" + std::string(dtype_name(to)) + ")"
                                : ""));
  }
  return to;
}

Status infer_bit_cast(InferContext& ctx) {
  TypeInfo t = ctx.input_type(0);
  auto to = bit_cast_target(ctx.node());
  t.dtype = to.ok() ? *to : DType::kUndefined;
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_bit_cast(Registrar& r) {
  r.add({.op_type = "BitCast",
         .since = 26,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(DType to, bit_cast_target(c.node()));
           return std::make_unique<BitCastKernel>(to);
         }},
        infer_bit_cast);
}

}  // namespace recur::reference
