#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/kernels.h"
#include "providers/reference/signal/signal_ops.h"

namespace recur::reference {

// Shared by the window functions and MelWeightMatrix (signal_ops.h).
Result<DType> signal_output_type(const Node& node) {
  AttrReader attrs(node);
  const int64_t code = attrs.get_int("output_datatype", static_cast<int64_t>(DType::kFloat32));
  RECUR_RETURN_IF_ERROR(attrs.status());
  const auto t = static_cast<DType>(code);
  bool numeric = false;
  visit_dtype(kNumericTypes, t, [&](auto) { numeric = true; });
  if (!numeric) {
    return invalid_model(node.describe() + ": output_datatype " + std::to_string(code) +
                         " is not a numeric type");
  }
  return t;
}

void register_signal_kernels(Registrar& r) {
  register_dft(r);
  register_stft(r);
  register_windows(r);
  register_mel_weight_matrix(r);
}

}  // namespace recur::reference
