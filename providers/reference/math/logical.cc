// And, Or, Xor on bool tensors, with broadcasting (the `broadcast`/`axis` attributes before
// opset 7). Not is in unary.cc.
#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

#define RECUR_LOGICAL(Name, expr)                                 \
  struct Name {                                                   \
    static constexpr auto kTypes = TypeList<bool>{};              \
    static constexpr bool kBoolOut = true;                        \
    static constexpr bool kLegacyAttrs = true;                    \
    static const char* error() { return ""; }                     \
    bool operator()(bool a, bool b, bool&) const { return expr; } \
  };

RECUR_LOGICAL(And, a&& b)
RECUR_LOGICAL(Or, a || b)
RECUR_LOGICAL(Xor, a != b)

#undef RECUR_LOGICAL

}  // namespace

void register_logical(Registrar& r) {
  add_binary<And>(r, "And", 1);
  add_binary<Or>(r, "Or", 1);
  add_binary<Xor>(r, "Xor", 1);
}

}  // namespace recur::reference
