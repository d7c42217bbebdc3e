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
template <Arith kOp, class T>
T wrapping(T a, T b) {
  if constexpr (kOp == Arith::kAdd) return wrap_add(a, b);
  if constexpr (kOp == Arith::kSub) return wrap_sub(a, b);
  if constexpr (kOp == Arith::kMul) return wrap_mul(a, b);
  return T{};
}

// a op b for every type but an integer division (which can fail: divide_integers). The
// operation is a template argument, so that the broadcasting loops over floats vectorize.
template <Arith kOp, class T>
T apply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return wrapping<kOp>(a, b);
  } else {
    const compute_t<T> x = to_compute(a), y = to_compute(b);
    if constexpr (kOp == Arith::kAdd) return from_compute<T>(x + y);
    if constexpr (kOp == Arith::kSub) return from_compute<T>(x - y);
    if constexpr (kOp == Arith::kMul) return from_compute<T>(x * y);
    return from_compute<T>(x / y);
  }
}

// a / b for integers; false for a division by zero. The most negative value divided by -1
// wraps (to itself).
template <class T>
bool divide_integers(T a, T b, T* out) {
  if (b == 0) return false;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) {
      *out = a;
      return true;
    }
  }
  *out = static_cast<T>(a / b);
  return true;
}

template <Arith kOp, class T>
bool run_typed(const Tensor& a, const Tensor& b, Tensor& out, const BinaryShapes& s) {
  if constexpr (kOp == Arith::kDiv && std::is_integral_v<T>) {
    bool ok = true;
    broadcast_binary<T, T, T>(a, b, out, s, [&](T x, T y) {
      T r{};
      ok &= divide_integers(x, y, &r);
      return r;
    });
    return ok;
  } else {
    broadcast_binary<T, T, T>(a, b, out, s, [](T x, T y) { return apply<kOp>(x, y); });
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
      switch (op_) {
        case Arith::kAdd:
          ok = run_typed<Arith::kAdd, T>(*a, *b, *out, s);
          break;
        case Arith::kSub:
          ok = run_typed<Arith::kSub, T>(*a, *b, *out, s);
          break;
        case Arith::kMul:
          ok = run_typed<Arith::kMul, T>(*a, *b, *out, s);
          break;
        case Arith::kDiv:
          ok = run_typed<Arith::kDiv, T>(*a, *b, *out, s);
          break;
      }
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
