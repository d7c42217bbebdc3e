// CumProd (opset 26): the running product along an axis (the scan is in cumulative.h).
#include "providers/reference/reduce/cumulative.h"

namespace recur::reference {

namespace {

struct Prod {
  // The types of the operator's constraint T.
  static constexpr auto kTypes = kFloatTypes + TypeList<int32_t, int64_t, uint32_t, uint64_t>{};
  static constexpr int kIdentity = 1;
  template <class A>
  static A combine(A acc, A v) {
    return acc * v;
  }
};

}  // namespace

void register_cum_prod(Registrar& r) {
  r.add({.op_type = "CumProd", .since = 26, .create = make_cumulative<Prod>()},
        infer_same_as_input0);
}

}  // namespace recur::reference
