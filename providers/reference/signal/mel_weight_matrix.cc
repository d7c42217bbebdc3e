// MelWeightMatrix (opset 17): a [dft_length / 2 + 1, num_mel_bins] matrix of triangular filters
// that maps a onesided spectrum to mel bins. The filter edges follow the ONNX reference: the
// mel range [mel(lower), mel(upper)] is divided into num_mel_bins + 2 steps, mel(f) = 2595
// log10(1 + f / 700), and each edge frequency f becomes the bin floor((dft_length + 1) * f /
// sample_rate).
#include <cmath>

#include "providers/reference/common/dispatch.h"
#include "providers/reference/common/util.h"
#include "providers/reference/signal/signal_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(DType dtype) : dtype_(dtype) {}

  Status run(KernelContext& ctx) const override {
    int64_t ints[3];
    const char* int_names[] = {"num_mel_bins", "dft_length", "sample_rate"};
    for (size_t i = 0; i < 3; ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
      auto v = read_scalar_int(*t, int_names[i]);
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      ints[i] = *v;
    }
    double edges[2];
    const char* edge_names[] = {"lower_edge_hertz", "upper_edge_hertz"};
    for (size_t i = 0; i < 2; ++i) {
      RECUR_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, 3 + i));
      auto v = read_scalar_double(*t, edge_names[i]);
      if (!v.ok()) return v.status().with_context(ctx.node().describe());
      edges[i] = *v;
    }
    const int64_t mel_bins = ints[0], dft_length = ints[1], rate = ints[2];
    if (mel_bins < 1 || dft_length < 1 || rate < 1 || !(edges[0] >= 0) || !(edges[1] > edges[0]) ||
        !std::isfinite(edges[1])) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "num_mel_bins, dft_length and sample_rate must be positive and "
                       "0 <= lower_edge_hertz < upper_edge_hertz");
    }
    const int64_t spectrum_bins = dft_length / 2 + 1;
    RECUR_ASSIGN_OR_RETURN(Tensor * y, allocate_checked(ctx, 0, dtype_, {spectrum_bins, mel_bins}));
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low = mel(edges[0]);
    const double step = (mel(edges[1]) - low) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> bin(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz =
          700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low) / 2595.0) - 1.0);
      const double b =
          std::floor((static_cast<double>(dft_length) + 1.0) * hz / static_cast<double>(rate));
      // Edges past the spectrum (upper_edge_hertz above the Nyquist frequency) are clamped.
      bin[static_cast<size_t>(i)] = std::min<int64_t>(static_cast<int64_t>(b), spectrum_bins - 1);
    }
    std::vector<double> w(static_cast<size_t>(spectrum_bins * mel_bins), 0.0);
    auto at = [&](int64_t j, int64_t i) -> double& {
      return w[static_cast<size_t>(j * mel_bins + i)];
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t left = bin[static_cast<size_t>(i)], center = bin[static_cast<size_t>(i) + 1],
                    right = bin[static_cast<size_t>(i) + 2];
      if (center == left) {
        at(center, i) = 1.0;
      } else {
        for (int64_t j = left; j <= center; ++j)
          at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
      for (int64_t j = center; j < right; ++j)
        at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
    visit_dtype(kNumericTypes, dtype_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y->data<T>();
      for (size_t k = 0; k < w.size(); ++k)
        out[k] = static_cast<T>(static_cast<compute_t<T>>(w[k]));
    });
    return ok_status();
  }

 private:
  DType dtype_;
};

}  // namespace

void register_mel_weight_matrix(Registrar& r) {
  r.add({.op_type = "MelWeightMatrix",
         .since = 17,
         .create = [](CompileContext& c) -> Result<std::unique_ptr<Kernel>> {
           RECUR_ASSIGN_OR_RETURN(DType t, signal_output_type(c.node()));
           return std::make_unique<MelWeightMatrixKernel>(t);
         }},
        [](InferContext& c) -> Status {
          RECUR_ASSIGN_OR_RETURN(DType t, signal_output_type(c.node()));
          c.set_output(0, type_with_rank(t, 2));
          return ok_status();
        });
}

}  // namespace recur::reference
