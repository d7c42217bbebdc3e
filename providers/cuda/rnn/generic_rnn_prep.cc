#include "providers/cuda/rnn/generic_rnn_prep.h"

namespace recur::cuda {

cell::CellParams generic_cell_params(const RnnSpec& spec) {
  cell::CellParams p;
  p.cell = spec.cell == RnnCell::kLstm  ? cell::kLstm
           : spec.cell == RnnCell::kGru ? cell::kGru
                                        : cell::kRnn;
  p.direction = spec.direction == RnnDirection::kForward   ? 0
                : spec.direction == RnnDirection::kReverse ? 1
                                                           : 2;
  p.layout = spec.layout;
  p.has_clip = spec.clip.has_value() ? 1 : 0;
  p.clip = spec.clip.value_or(0.0f);
  p.input_forget = spec.input_forget ? 1 : 0;
  p.linear_before_reset = spec.linear_before_reset ? 1 : 0;
  for (int d = 0; d < spec.num_directions(); ++d) {
    for (int k = 0; k < spec.activations_per_direction(); ++k) {
      const RnnActivation& a = spec.activation(d, k);
      p.act[d][k] = cell::Act{static_cast<int32_t>(a.kind), a.alpha, a.beta};
    }
  }
  p.D = spec.num_directions();
  return p;
}

template <class C>
std::vector<C> values_as(const Tensor& t) {
  std::vector<C> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DType::kFloat16:
        v[static_cast<size_t>(i)] = static_cast<C>(static_cast<float>(t.data<Float16>()[i]));
        break;
      case DType::kFloat64:
        v[static_cast<size_t>(i)] = static_cast<C>(t.data<double>()[i]);
        break;
      default:
        v[static_cast<size_t>(i)] = static_cast<C>(t.data<float>()[i]);
        break;
    }
  }
  return v;
}

template <class C>
void pack_bias_host(const cell::CellParams& p, const Tensor& b, std::vector<C>* bias,
                    std::vector<C>* rbh) {
  const std::vector<C> raw = values_as<C>(b);
  const int64_t GH = p.gates() * p.H;
  bias->assign(static_cast<size_t>(p.D * GH), C(0));
  const bool separate = p.cell == cell::kGru && p.linear_before_reset;
  rbh->assign(separate ? static_cast<size_t>(p.D * p.H) : 0, C(0));
  for (int64_t e = 0; e < p.D * GH; ++e) {
    cell::pack_bias_element<C, C>(p, raw.data(), bias->data(), separate ? rbh->data() : nullptr, e);
  }
}

template std::vector<float> values_as<float>(const Tensor&);
template std::vector<double> values_as<double>(const Tensor&);
template void pack_bias_host<float>(const cell::CellParams&, const Tensor&, std::vector<float>*,
                                    std::vector<float>*);
template void pack_bias_host<double>(const cell::CellParams&, const Tensor&, std::vector<double>*,
                                     std::vector<double>*);

}  // namespace recur::cuda
