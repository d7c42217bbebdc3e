// BitShift on unsigned integers. A shift by the type's width or more gives 0 (numpy's
// result), where C++ would have undefined behaviour.
#include <limits>

#include "providers/reference/math/elementwise.h"
#include "providers/reference/math/math.h"

namespace recur::reference {

namespace {

struct BitShift {
  static constexpr auto kTypes = kUnsignedIntTypes;
  static constexpr bool kBoolOut = false;
  static constexpr bool kLegacyAttrs = false;
  static const char* error() { return ""; }
  bool left = true;

  static Result<BitShift> make(const Node& n) {
    AttrReader attrs(n);
    const std::string direction = attrs.get_string("direction", "");
    RECUR_RETURN_IF_ERROR(attrs.status());
    if (direction != "LEFT" && direction != "RIGHT") {
      return invalid_model(n.describe() + ": direction must be LEFT or RIGHT, not '" + direction +
                           "'");
    }
    BitShift op;
    op.left = direction == "LEFT";
    return op;
  }

  template <class C>
  C operator()(C a, C b, bool&) const {
    if (b >= static_cast<C>(std::numeric_limits<C>::digits)) return 0;
    // Shift in at least unsigned int so that small types are not promoted to signed int.
    using P = std::common_type_t<C, unsigned int>;
    return left ? static_cast<C>(static_cast<P>(a) << b) : static_cast<C>(a >> b);
  }
};

}  // namespace

void register_bit_shift(Registrar& r) { add_binary<BitShift>(r, "BitShift", 11); }

}  // namespace recur::reference
