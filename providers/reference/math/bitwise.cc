// BitwiseAnd, BitwiseOr, BitwiseXor (broadcasting) and BitwiseNot on integer tensors (opset 18).
// One file for the family, as logical.cc does for And/Or/Xor: they differ only in the operator.
#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

// Integer promotion turns uint8 & uint8 into int; the cast back keeps the storage type.
#define RECUR_BITWISE(Name, op)                 \
  struct Name {                                 \
    static constexpr auto kTypes = kIntTypes;   \
    static constexpr bool kBoolOut = false;     \
    static constexpr bool kLegacyAttrs = false; \
    static const char* error() { return ""; }   \
    template <class C>                          \
    C operator()(C a, C b, bool&) const {       \
      return static_cast<C>(a op b);            \
    }                                           \
  };

RECUR_BITWISE(BitwiseAnd, &)
RECUR_BITWISE(BitwiseOr, |)
RECUR_BITWISE(BitwiseXor, ^)

#undef RECUR_BITWISE

struct BitwiseNot {
  static constexpr auto kTypes = kIntTypes;
  static constexpr bool kBoolOut = false;
  template <class C>
  C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

}  // namespace

void register_bitwise(Registrar& r) {
  add_binary<BitwiseAnd>(r, "BitwiseAnd", 18);
  add_binary<BitwiseOr>(r, "BitwiseOr", 18);
  add_binary<BitwiseXor>(r, "BitwiseXor", 18);
  add_unary<BitwiseNot>(r, "BitwiseNot", 18);
}

}  // namespace recur::reference
