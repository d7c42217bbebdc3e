// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: broadcasting comparisons with a bool
// output. Any comparison with NaN is false, as in numpy.
#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

#define RECUR_COMPARISON(Name, legacy, expr)     \
  struct Name {                                  \
    static constexpr auto kTypes = kAllTypes;    \
    static constexpr bool kBoolOut = true;       \
    static constexpr bool kLegacyAttrs = legacy; \
    static const char* error() { return ""; }    \
    template <class C>                           \
    bool operator()(C a, C b, bool&) const {     \
      return expr;                               \
    }                                            \
  };

RECUR_COMPARISON(Equal, true, a == b)
RECUR_COMPARISON(Less, true, a < b)
RECUR_COMPARISON(Greater, true, a > b)
RECUR_COMPARISON(LessOrEqual, false, a <= b)
RECUR_COMPARISON(GreaterOrEqual, false, a >= b)

#undef RECUR_COMPARISON

}  // namespace

void register_comparison(Registrar& r) {
  add_binary<Equal>(r, "Equal", 1);
  add_binary<Less>(r, "Less", 1);
  add_binary<Greater>(r, "Greater", 1);
  add_binary<LessOrEqual>(r, "LessOrEqual", 12);
  add_binary<GreaterOrEqual>(r, "GreaterOrEqual", 12);
}

}  // namespace recur::reference
