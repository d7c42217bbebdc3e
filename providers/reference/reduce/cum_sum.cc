// CumSum (opset 11): the running sum along an axis (the scan is in cumulative.h).
#include "providers/reference/reduce/cumulative.h"

namespace recur::reference {

namespace {

struct Sum {
  static constexpr auto kTypes = kNumericTypes;
  static constexpr int kIdentity = 0;
  template <class A>
  static A combine(A acc, A v) {
    return acc + v;
  }
};

}  // namespace

void register_cum_sum(Registrar& r) {
  r.add({.op_type = "CumSum", .since = 11, .create = make_cumulative<Sum>()}, infer_same_as_input0);
}

}  // namespace recur::reference
