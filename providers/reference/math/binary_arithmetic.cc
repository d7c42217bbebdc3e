// Add, Sub, Mul, Div: numpy broadcasting from opset 7, the legacy `broadcast`/`axis` rule
// before it.
#include <limits>
#include <type_traits>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

// Signed overflow wraps, as numpy's does, instead of being undefined behaviour (wrap_mul also
// avoids the int promotion of uint16 * uint16).
template <class T>
T wrapping(Arith op, T a, T b) {
  switch (op) {
    case Arith::kAdd:
      return wrap_add(a, b);
    case Arith::kSub:
      return wrap_sub(a, b);
    case Arith::kMul:
      return wrap_mul(a, b);
    case Arith::kDiv:
      break;
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
      case Arith::kAdd:
        r = x + y;
        break;
      case Arith::kSub:
        r = x - y;
        break;
      case Arith::kMul:
        r = x * y;
        break;
      case Arith::kDiv:
        r = x / y;
        break;
    }
    *out = from_compute<T>(r);
    return true;
  }
}

class ArithmeticKernel final : public Kernel {
 public:
  explicit ArithmeticKernel(Arith op) : op_(op) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
    if (a->dtype() != b->dtype()) {
      return dtype_mismatch(ctx, "A", a->dtype(), "B", b->dtype());
    }
    RECUR_ASSIGN_OR_RETURN(BinaryShapes s, binary_shapes(ctx, *a, *b, /*legacy_attrs=*/true));
    RECUR_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, a->dtype(), s.out));
    bool ok = true;
    const bool handled = visit_dtype(kNumericTypes, a->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      broadcast_binary<T, T, T>(*a, *b, *out, s, [&](T x, T y) {
        T r{};
        ok &= apply(op_, x, y, &r);
        return r;
      });
    });
    if (!handled) return unsupported_dtype(ctx, a->dtype());
    if (!ok) return ctx.error(ErrorCode::kInvalidArgument, "integer division by zero");
    return ok_status();
  }

 private:
  Arith op_;
};

void add_arith(Registrar& r, const char* name, Arith op) {
  r.add({.op_type = name,
         .since = 1,
         .create = [op](CompileContext&) -> Result<std::unique_ptr<Kernel>> {
           return std::make_unique<ArithmeticKernel>(op);
         }},
        infer_binary(DType::kUndefined, /*legacy_attrs=*/true));
}

}  // namespace

void register_binary_arithmetic(Registrar& r) {
  add_arith(r, "Add", Arith::kAdd);
  add_arith(r, "Sub", Arith::kSub);
  add_arith(r, "Mul", Arith::kMul);
  add_arith(r, "Div", Arith::kDiv);
}

}  // namespace recur::reference
