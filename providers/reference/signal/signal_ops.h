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
// 1/length when `inverse`. Lengths up to 32, past 2^22, and transforms of few inputs or bins
// (`inputs` * `bins` under the FFT's cost) are summed directly, from a table of `length`
// angles indexed modulo length so that large k * n lose no precision. Other lengths go through
// a radix-2 FFT: a power of two directly, any other length as Bluestein's chirp convolution of
// a power-of-two size. Both are in double; the FFT's error grows as log(length), the direct
// sum's as length.
class DftPlan {
 public:
  DftPlan(int64_t length, bool inverse, int64_t inputs, int64_t bins);
  void run(const std::vector<std::complex<double>>& in, int64_t bins,
           std::vector<std::complex<double>>* out) const;

 private:
  using Complex = std::complex<double>;
  void direct(const std::vector<Complex>& in, int64_t bins, std::vector<Complex>* out) const;
  // In place, size_ points, forward (exp(-i...)) or backward, unscaled.
  void fft(Complex* a, bool backward) const;

  int64_t length_;
  bool inverse_;
  std::vector<Complex> twiddle_;    // direct: exp(-+2 pi i j / length); FFT: exp(-2 pi i j / size)
  int64_t size_ = 0;                // the FFT's size (0: direct)
  std::vector<Complex> chirp_;      // Bluestein: exp(+-i pi n^2 / length), n < length
  std::vector<Complex> chirp_fft_;  // the FFT of the chirp, wrapped to size_
  mutable std::vector<Complex> work_;
};

}  // namespace recur::reference
