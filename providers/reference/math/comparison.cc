// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: broadcasting comparisons with a bool
// output. Any comparison with NaN is false, as in numpy. Equal takes strings (opset 19).
#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

#define RECUR_COMPARISON(Name, types, legacy, expr) \
  struct Name {                                     \
    static constexpr auto kTypes = types;           \
    static constexpr bool kBoolOut = true;          \
    static constexpr bool kLegacyAttrs = legacy;    \
    static const char* error() { return ""; }       \
    template <class C>                              \
    bool operator()(C a, C b, bool&) const {        \
      return expr;                                  \
    }                                               \
  };

// Equal-19 compares strings too; a model of an older opset with string inputs fails ONNX's
// type check before it gets here.
RECUR_COMPARISON(Equal, kAllTypes + TypeList<std::string>{}, true, a == b)
RECUR_COMPARISON(Less, kAllTypes, true, a < b)
RECUR_COMPARISON(Greater, kAllTypes, true, a > b)
RECUR_COMPARISON(LessOrEqual, kAllTypes, false, a <= b)
RECUR_COMPARISON(GreaterOrEqual, kAllTypes, false, a >= b)

#undef RECUR_COMPARISON

}  // namespace

void register_comparison(Registrar& r) {
  add_binary<Equal>(r, "Equal", 1, /*takes_strings=*/true);
  add_binary<Less>(r, "Less", 1);
  add_binary<Greater>(r, "Greater", 1);
  add_binary<LessOrEqual>(r, "LessOrEqual", 12);
  add_binary<GreaterOrEqual>(r, "GreaterOrEqual", 12);
}

}  // namespace recur::reference
