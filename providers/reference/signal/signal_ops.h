// Registration functions of signal/, and the discrete Fourier transform they share.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "providers/reference/common/registrar.h"
#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

void register_dft(Registrar& r);
void register_stft(Registrar& r);
void register_windows(Registrar& r);  // HannWindow, HammingWindow, BlackmanWindow
void register_mel_weight_matrix(Registrar& r);

// The output_datatype attribute of the window functions and MelWeightMatrix (default float32),
// checked to be numeric.
Result<DType> signal_output_type(const Node& node);

// A DFT of length `length` over `in` (in.size() <= length: zero-padded), keeping the first
// `bins` outputs. X[k] = sum_n x[n] exp(-+2 pi i k n / length), the sign + and a factor
// 1/length when `inverse`. The angles come from a table of `length` entries, indexed modulo
// length, so large k * n lose no precision.
class DftPlan {
 public:
  DftPlan(int64_t length, bool inverse);
  void run(const std::vector<std::complex<double>>& in, int64_t bins,
           std::vector<std::complex<double>>* out) const;

 private:
  int64_t length_;
  bool inverse_;
  std::vector<std::complex<double>> twiddle_;  // exp(-+2 pi i j / length)
};

}  // namespace recur::reference
