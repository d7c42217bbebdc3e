// Mod: the remainder with the divisor's sign (Python's %) by default, or with the dividend's
// sign (C's fmod) when fmod=1. An integer divisor of 0 is an error.
#include <cmath>
#include <limits>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

struct Mod {
  static constexpr auto kTypes = kNumericTypes;
  static constexpr bool kBoolOut = false;
  static constexpr bool kLegacyAttrs = false;
  static const char* error() { return "integer modulo by zero"; }
  bool fmod = false;

  // The spec asks for fmod=1 with floating-point inputs; with fmod=0 they get numpy's mod
  // (the divisor's sign) rather than an error.
  static Result<Mod> make(const Node& n) {
    AttrReader attrs(n);
    Mod op;
    op.fmod = attrs.get_int("fmod", 0) != 0;
    RECUR_RETURN_IF_ERROR(attrs.status());
    return op;
  }

  template <class C>
  C operator()(C a, C b, bool& ok) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) {
        ok = false;
        return 0;
      }
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;  // INT_MIN % -1 would overflow
      }
      C r = static_cast<C>(a % b);
      if constexpr (std::is_signed_v<C>) {
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      }
      return r;
    } else {
      C r = std::fmod(a, b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};

}  // namespace

void register_mod(Registrar& r) { add_binary<Mod>(r, "Mod", 10); }

}  // namespace recur::reference
