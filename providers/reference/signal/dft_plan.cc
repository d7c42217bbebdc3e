// DftPlan (signal_ops.h): the transform DFT and STFT share.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "providers/reference/signal/signal_ops.h"

namespace recur::reference {

namespace {

constexpr int64_t kDirectUpTo = 32;
constexpr int64_t kFftUpTo = int64_t{1} << 22;

bool is_power_of_two(int64_t n) { return (n & (n - 1)) == 0; }

}  // namespace

DftPlan::DftPlan(int64_t length, bool inverse, int64_t inputs, int64_t bins)
    : length_(length), inverse_(inverse) {
  const double sign = inverse ? 1.0 : -1.0;
  int64_t fft_size = 1;
  while (fft_size < (is_power_of_two(length) ? length : 2 * length - 1)) fft_size *= 2;
  // The direct sum costs inputs * bins; the FFT about (one or three transforms of) size
  // log2(size) butterflies. A few inputs or bins (a long dft_length over a short signal) sum
  // directly, with no FFT buffers.
  const double fft_cost =
      3.0 * static_cast<double>(fft_size) * std::log2(static_cast<double>(fft_size));
  const bool direct =
      length <= kDirectUpTo || length > kFftUpTo ||
      static_cast<double>(std::min(inputs, length)) * static_cast<double>(bins) <= fft_cost;
  if (direct) {
    twiddle_.resize(static_cast<size_t>(length));
    for (int64_t j = 0; j < length; ++j) {
      const double angle =
          sign * 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(length);
      twiddle_[static_cast<size_t>(j)] = {std::cos(angle), std::sin(angle)};
    }
    return;
  }
  size_ = fft_size;
  twiddle_.resize(static_cast<size_t>(size_ / 2));
  for (int64_t j = 0; j < size_ / 2; ++j) {
    const double angle =
        -2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(size_);
    twiddle_[static_cast<size_t>(j)] = {std::cos(angle), std::sin(angle)};
  }
  work_.resize(static_cast<size_t>(size_));
  if (is_power_of_two(length)) return;
  // Bluestein: k n = (k^2 + n^2 - (k - n)^2) / 2, so X[k] = conj(b[k]) sum_n (x[n] conj(b[n]))
  // b[k - n] with b[n] = exp(-+i pi n^2 / length) (the sign opposite the transform's). n^2 is
  // taken modulo 2 length first: the angle stays small and exact.
  chirp_.resize(static_cast<size_t>(length));
  for (int64_t n = 0; n < length; ++n) {
    const int64_t sq = (n * n) % (2 * length);
    const double angle =
        -sign * std::numbers::pi * static_cast<double>(sq) / static_cast<double>(length);
    chirp_[static_cast<size_t>(n)] = {std::cos(angle), std::sin(angle)};
  }
  chirp_fft_.assign(static_cast<size_t>(size_), {});
  for (int64_t n = 0; n < length; ++n) {
    chirp_fft_[static_cast<size_t>(n)] = chirp_[static_cast<size_t>(n)];
    if (n > 0) chirp_fft_[static_cast<size_t>(size_ - n)] = chirp_[static_cast<size_t>(n)];
  }
  fft(chirp_fft_.data(), false);
}

void DftPlan::fft(Complex* a, bool backward) const {
  const int64_t n = size_;
  for (int64_t i = 1, j = 0; i < n; ++i) {  // bit reversal
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t len = 2; len <= n; len *= 2) {
    const int64_t half = len / 2, step = n / len;
    for (int64_t i = 0; i < n; i += len) {
      for (int64_t k = 0; k < half; ++k) {
        Complex w = twiddle_[static_cast<size_t>(k * step)];
        if (backward) w = std::conj(w);
        const Complex u = a[i + k], v = a[i + k + half] * w;
        a[i + k] = u + v;
        a[i + k + half] = u - v;
      }
    }
  }
}

void DftPlan::direct(const std::vector<Complex>& in, int64_t bins,
                     std::vector<Complex>* out) const {
  const auto n_in = static_cast<int64_t>(in.size());
  for (int64_t k = 0; k < bins; ++k) {
    Complex sum = 0;
    int64_t j = 0;  // k * n mod length
    for (int64_t n = 0; n < n_in && n < length_; ++n) {
      sum += in[static_cast<size_t>(n)] * twiddle_[static_cast<size_t>(j)];
      j += k;
      if (j >= length_) j %= length_;
    }
    (*out)[static_cast<size_t>(k)] = sum;
  }
}

void DftPlan::run(const std::vector<Complex>& in, int64_t bins, std::vector<Complex>* out) const {
  out->assign(static_cast<size_t>(bins), {});
  const int64_t n_in = std::min<int64_t>(static_cast<int64_t>(in.size()), length_);
  if (size_ == 0) {
    direct(in, bins, out);
  } else if (chirp_.empty()) {
    std::fill(work_.begin(), work_.end(), Complex{});
    std::copy(in.begin(), in.begin() + n_in, work_.begin());
    fft(work_.data(), inverse_);
    std::copy(work_.begin(), work_.begin() + bins, out->begin());
  } else {
    std::fill(work_.begin(), work_.end(), Complex{});
    for (int64_t n = 0; n < n_in; ++n)
      work_[static_cast<size_t>(n)] =
          in[static_cast<size_t>(n)] * std::conj(chirp_[static_cast<size_t>(n)]);
    fft(work_.data(), false);
    for (int64_t i = 0; i < size_; ++i)
      work_[static_cast<size_t>(i)] *= chirp_fft_[static_cast<size_t>(i)];
    fft(work_.data(), true);
    const double scale = 1.0 / static_cast<double>(size_);
    for (int64_t k = 0; k < bins; ++k)
      (*out)[static_cast<size_t>(k)] =
          std::conj(chirp_[static_cast<size_t>(k)]) * work_[static_cast<size_t>(k)] * scale;
  }
  if (inverse_) {
    for (Complex& v : *out) v /= static_cast<double>(length_);
  }
}

}  // namespace recur::reference
