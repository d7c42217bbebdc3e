// What cuDNN's RNN can and cannot express, per ONNX attribute (docs/semantics.md, cuDNN 9).
#include <cstring>
#include <sstream>

#include "providers/cuda/rnn/cudnn_rnn.h"
#include "providers/cuda/rnn/generic_rnn_plan.h"
#include "providers/cuda/rnn/generic_rnn_prep.h"
#include "runtime/rnn/rnn_spec.h"
#include "runtime/rnn/stacked_rnn.h"

namespace recur::cuda {

namespace {

std::string activation_list(const RnnSpec& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.activations.size(); ++i) {
    if (i) out += ",";
    out += s.activations[i].name();
  }
  return out + "]";
}

bool all_zero(const Tensor& t) {
  if (t.dtype() == DType::kFloat32) {
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (p[i] != 0.0f) return false;
    return true;
  }
  if (t.dtype() == DType::kFloat16 || t.dtype() == DType::kBFloat16) {
    // +0 and -0: every bit but the sign is clear.
    const auto* p = static_cast<const uint16_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i)
      if (p[i] & 0x7fff) return false;
    return true;
  }
  if (t.dtype() == DType::kFloat64) {
    const double* p = t.data<double>();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (p[i] != 0.0) return false;
    return true;
  }
  const auto* p = static_cast<const unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i)
    if (p[i]) return false;
  return true;
}

std::string float_text(float v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

Claim cudnn_rnn_claim(const Node& node, const Graph& graph) {
  Result<RnnSpec> parsed = RnnSpec::parse(node);
  if (!parsed.ok()) return Claim::decline(parsed.status().message());
  const RnnSpec& spec = *parsed;
  std::vector<std::string> why;

  const DType dt =
      node.has_input(kRnnX) ? graph.value(node.inputs[kRnnX]).type.dtype : DType::kUndefined;
  if (dt != DType::kFloat32 && dt != DType::kFloat16) {
    why.push_back("X is " +
                  std::string(dt == DType::kUndefined ? "of unknown type" : dtype_name(dt)) +
                  ": the cuDNN RNN path runs float32 and float16");
  }
  if (spec.clip) {
    why.push_back("clip=" + float_text(*spec.clip) +
                  ": cuDNN's clip bounds the cell state, while ONNX clips each gate's "
                  "pre-activation");
  }
  if (!spec.default_activations()) {
    bool ok = false;
    if (spec.cell == RnnCell::kRnn) {
      // cuDNN has RNN_TANH and RNN_RELU, one mode for both directions.
      const auto k = spec.activations.front().kind;
      ok = k == RnnActivation::Kind::kRelu || k == RnnActivation::Kind::kTanh;
      for (const auto& a : spec.activations) ok = ok && a.kind == k;
    }
    if (!ok) {
      why.push_back(
          "activations=" + activation_list(spec) +
          (spec.cell == RnnCell::kRnn
               ? ": cuDNN's RNN runs Tanh or Relu, the same in both directions"
               : std::string(": cuDNN runs only the default activations (") +
                     (spec.cell == RnnCell::kLstm ? "Sigmoid,Tanh,Tanh" : "Sigmoid,Tanh") + ")"));
    }
  }
  if (spec.alpha_beta_given) {
    why.push_back(
        "activation_alpha/activation_beta are set: cuDNN's activations take no "
        "parameters");
  }
  if (spec.input_forget) {
    why.push_back("input_forget=1: cuDNN's LSTM has no coupled input and forget gates");
  }
  if (spec.cell == RnnCell::kGru && !spec.linear_before_reset) {
    why.push_back(
        "linear_before_reset=0: cuDNN's GRU applies the reset gate after the "
        "recurrent matmul, which is linear_before_reset=1");
  }
  if (spec.cell == RnnCell::kLstm && node.has_input(kRnnP)) {
    const Tensor* p = graph.constant(node.inputs[kRnnP]);
    if (!p) {
      why.push_back("P (peepholes) is not a constant: cuDNN's LSTM has no peephole connections");
    } else if (!all_zero(*p)) {
      why.push_back("P (peepholes) is not all zeros: cuDNN's LSTM has no peephole connections");
    }
  }
  auto static_rank3 = [&](size_t i) {
    if (!node.has_input(i)) return false;
    const TypeInfo& t = graph.value(node.inputs[i]).type;
    return t.is_static() && t.rank() == 3;
  };
  if (!static_rank3(kRnnW) || !static_rank3(kRnnR)) {
    why.push_back("W and R need static shapes: cuDNN's weight space is laid out at load");
  }
  // cuDNN takes sizes as int32.
  const TypeInfo& x = node.has_input(kRnnX) ? graph.value(node.inputs[kRnnX]).type : TypeInfo{};
  if (x.rank() == 3) {
    for (const Dim& d : *x.shape) {
      if (d.is_fixed() && d.value > INT32_MAX) {
        why.push_back("X has a dimension beyond cuDNN's int32 sizes");
        break;
      }
    }
  }
  if (spec.hidden_size > INT32_MAX / 8) why.push_back("hidden_size is beyond cuDNN's int32 sizes");

  if (why.empty()) return Claim::accept();
  std::string reason;
  for (const auto& w : why) reason += (reason.empty() ? "" : "; ") + w;
  return Claim::decline(reason);
}

Claim cudnn_stacked_rnn_claim(const Node& node, const Graph& graph) {
  Result<StackedRnnSpec> parsed = parse_stacked_rnn(node);
  if (!parsed.ok()) return Claim::decline(parsed.status().message());
  for (int l = 0; l < parsed->num_layers; ++l) {
    Node layer = stacked_layer_node(node, l);
    layer.inputs[kRnnX] = node.inputs[0];  // every layer's X has the input's type
    const Claim c = cudnn_rnn_claim(layer, graph);
    if (!c.yes) return Claim::decline("layer " + std::to_string(l) + ": " + c.reason);
  }
  return Claim::accept();
}

std::string cudnn_rnn_grid_reason(const Node& node, const Graph& graph, const CudaOptions& cudnn,
                                  CudaOptions::Persistent generic, const GpuTraits& gpu) {
  if (!cudnn.defer_to_grid || cudnn.tf32 || generic == CudaOptions::Persistent::kOff) return "";
  if (!gpu.cooperative_launch || gpu.multiprocessors < 1) return "";
  Result<RnnSpec> parsed = RnnSpec::parse(node);
  if (!parsed.ok() || !cudnn_rnn_claim(node, graph).yes) return "";
  const RnnSpec& spec = *parsed;
  const TypeInfo& x = graph.value(node.inputs[kRnnX]).type;
  if (x.dtype != DType::kFloat32 || x.rank() != 3) return "";
  const Dim& batch = (*x.shape)[spec.layout == 0 ? 1 : 0];
  // A batch the model leaves open may exceed what the grid kernel takes, where cuda-generic's
  // per-step launches were level with cuDNN, not faster (lstm_large).
  if (!batch.is_fixed() || batch.value < 1 || batch.value > kGridAutoBatch) return "";
  const int64_t N = batch.value;
  // cudnn_rnn_claim has checked that W and R have static rank-3 shapes.
  CudnnRnnGeometry geo;
  geo.cell = spec.cell;
  geo.directions = spec.num_directions();
  geo.input_size = graph.value(node.inputs[kRnnW]).type.static_shape()[2];
  geo.hidden_size = spec.hidden_size > 0 ? spec.hidden_size
                                         : graph.value(node.inputs[kRnnR]).type.static_shape()[2];
  auto constant = [&](size_t i) { return !node.has_input(i) || graph.constant(node.inputs[i]); };
  // cudnn tries a persistent algorithm only with its weight space filled at load.
  const bool fixed_weights = constant(kRnnW) && constant(kRnnR) && constant(kRnnB);
  if (fixed_weights &&
      !persistent_candidates(geo, DType::kFloat32, N, cudnn.persistent, gpu).empty()) {
    return "";
  }
  cell::CellParams p = generic_cell_params(spec);
  p.N = N;
  p.H = geo.hidden_size;
  if (!grid_shape(p, gpu.multiprocessors, gpu.shared_memory_optin, sizeof(float), nullptr).ok()) {
    return "";
  }
  return "float32 at a static batch of " + std::to_string(N) +
         (fixed_weights ? ", which cuDNN runs with its STANDARD algorithm"
                        : ", with weights that are not constants (cuDNN's STANDARD algorithm)") +
         ": left to cuda-generic's grid kernel, which runs every step in one launch and was "
         "faster on such shapes (cudnn.defer_to_grid=0 keeps them on cudnn)";
}

}  // namespace recur::cuda
