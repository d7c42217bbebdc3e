// Add, Sub, Mul, Div: numpy broadcasting from opset 7, the legacy `broadcast`/`axis` rule
// before it.
#include <limits>
#include <type_traits>

#include "providers/reference/common/broadcast.h"
#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

// Signed overflow wraps, as numpy's does, instead of being undefined behaviour.
template <class T>
T wrapping(Arith op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  switch (op) {
    case Arith::kAdd: return static_cast<T>(static_cast<U>(ua + ub));
    case Arith::kSub: return static_cast<T>(static_cast<U>(ua - ub));
    case Arith::kMul: return static_cast<T>(static_cast<U>(ua * ub));
    case Arith::kDiv: break;
  }
  return T{};
}

template <class T>
bool apply(Arith op, T a, T b, T* out) {
  if constexpr (std::is_integral_v<T>) {
    if (op == Arith::kDiv) {
      if (b == 0) return false;
      if constexpr (std::is_signed_v<T>) {
        if (a == std::numeric_limits<T>::min() && b == -1) {
          *out = a;  // the wrapped result
          return true;
        }
      }
      *out = static_cast<T>(a / b);
      return true;
    }
    *out = wrapping(op, a, b);
    return true;
  } else {
    const compute_t<T> x = to_compute(a), y = to_compute(b);
    compute_t<T> r{};
    switch (op) {
      case Arith::kAdd: r = x + y; break;
      case Arith::kSub: r = x - y; break;
      case Arith::kMul: r = x * y; break;
      case Arith::kDiv: r = x / y; break;
    }
    *out = from_compute<T>(r);
    return true;
  }
}

// Before opset 7, B broadcasts only when broadcast=1, aligned at `axis` (default: trailing).
Result<Shape> legacy_b_shape(const Node& node, const Shape& a, const Shape& b) {
  AttrReader attrs(node);
  const int64_t broadcast = attrs.get_int("broadcast", 0);
  const bool has_axis = attrs.has("axis");
  const int64_t axis_attr = attrs.get_int("axis", 0);
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (!broadcast) {
    if (a != b) {
      return invalid_argument("shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                              " differ and broadcast=0");
    }
    return b;
  }
  if (!has_axis) return b;
  const auto rank = static_cast<int64_t>(a.size());
  int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  if (axis < 0 || axis + static_cast<int64_t>(b.size()) > rank) {
    return invalid_argument("axis " + std::to_string(axis_attr) + " cannot place B " +
                            shape_to_string(b) + " in A " + shape_to_string(a));
  }
  Shape out(a.size(), 1);
  for (size_t i = 0; i < b.size(); ++i) out[static_cast<size_t>(axis) + i] = b[i];
  return out;
}

class ArithmeticKernel final : public Kernel {
 public:
  explicit ArithmeticKernel(Arith op) : op_(op) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    if (a->dtype() != b->dtype()) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "inputs have different dtypes " + std::string(dtype_name(a->dtype())) +
                           " and " + std::string(dtype_name(b->dtype())));
    }
    Shape b_shape = b->shape();
    if (ctx.node().opset < 7) {
      auto s = legacy_b_shape(ctx.node(), a->shape(), b->shape());
      if (!s.ok()) return s.status().with_context(ctx.node().describe());
      b_shape = *s;
    }
    auto out_shape = broadcast_shapes({a->shape(), b_shape});
    if (!out_shape.ok()) return out_shape.status().with_context(ctx.node().describe());
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, a->dtype(), *out_shape));
    bool ok = true;
    const bool handled = visit_dtype(kNumericTypes, a->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = a->data<T>();
      const T* pb = b->data<T>();
      T* po = out->data<T>();
      for_each_broadcast<2>(*out_shape, {&a->shape(), &b_shape},
                            [&](int64_t i, const std::array<int64_t, 2>& off) {
                              ok &= apply(op_, pa[off[0]], pb[off[1]], &po[i]);
                            });
    });
    if (!handled) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "dtype " + std::string(dtype_name(a->dtype())) + " is not supported");
    }
    if (!ok) return ctx.error(ErrorCode::kInvalidArgument, "integer division by zero");
    return ok_status();
  }

 private:
  Arith op_;
};

Status infer_broadcast(InferContext& ctx) {
  TypeInfo out;
  out.dtype = ctx.input_type(0).dtype;
  if (ctx.opset() >= 7) {
    auto dims = broadcast_dims(ctx.input_type(0).shape, ctx.input_type(1).shape);
    if (!dims.ok()) return ctx.error(dims.status().message());
    out.shape = *dims;
  } else {
    out.shape = ctx.input_type(0).shape;
  }
  ctx.set_output(0, out);
  return ok_status();
}

void add_arith(KernelRegistry& r, const char* name, Arith op) {
  r.add({.op_type = name,
         .since = 1,
         .create = [op](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<ArithmeticKernel>(op);
         },
         .infer = infer_broadcast});
}

}  // namespace

void register_binary_arithmetic(KernelRegistry& r) {
  add_arith(r, "Add", Arith::kAdd);
  add_arith(r, "Sub", Arith::kSub);
  add_arith(r, "Mul", Arith::kMul);
  add_arith(r, "Div", Arith::kDiv);
}

}  // namespace recur::reference
