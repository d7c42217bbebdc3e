#include <cmath>
#include <numbers>

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

DftPlan::DftPlan(int64_t length, bool inverse) : length_(length), inverse_(inverse) {
  twiddle_.resize(static_cast<size_t>(length));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t j = 0; j < length; ++j) {
    const double angle =
        sign * 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(length);
    twiddle_[static_cast<size_t>(j)] = {std::cos(angle), std::sin(angle)};
  }
}

void DftPlan::run(const std::vector<std::complex<double>>& in, int64_t bins,
                  std::vector<std::complex<double>>* out) const {
  out->assign(static_cast<size_t>(bins), {});
  const auto n_in = static_cast<int64_t>(in.size());
  for (int64_t k = 0; k < bins; ++k) {
    std::complex<double> sum = 0;
    int64_t j = 0;  // k * n mod length
    for (int64_t n = 0; n < n_in && n < length_; ++n) {
      sum += in[static_cast<size_t>(n)] * twiddle_[static_cast<size_t>(j)];
      j += k;
      if (j >= length_) j %= length_;
    }
    (*out)[static_cast<size_t>(k)] = inverse_ ? sum / static_cast<double>(length_) : sum;
  }
}

void register_signal_kernels(Registrar& r) {
  register_dft(r);
  register_stft(r);
  register_windows(r);
  register_mel_weight_matrix(r);
}

}  // namespace recur::reference
