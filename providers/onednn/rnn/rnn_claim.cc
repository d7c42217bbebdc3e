// The claim rules shared by the oneDNN LSTM, GRU and RNN kernels (see rnn_common.h).
#include <string>

#include "providers/onednn/rnn/rnn_common.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

RECUR_LOAD_PATH Claim claim_rnn_common(const Node& node, const Graph& graph, const RnnSpec& spec) {
  if (node.has_input(kRnnX)) {
    const DType dt = graph.value(node.inputs[kRnnX]).type.dtype;
    if (dt != DType::kFloat32 && dt != DType::kUndefined) {
      return Claim::decline("oneDNN RNN primitives run float32 here, X is " +
                            std::string(dtype_name(dt)));
    }
  }
  if (spec.clip) {
    return Claim::decline("clip=" + std::to_string(*spec.clip) +
                          ": oneDNN's RNN primitives cannot bound the gate pre-activations");
  }
  // An input size of 0 (W is [D, G*H, 0]) is valid ONNX that oneDNN's primitives cannot take.
  if (node.has_input(kRnnW)) {
    const TypeInfo& w = graph.value(node.inputs[kRnnW]).type;
    if (w.shape && w.shape->size() == 3 && (*w.shape)[2].is_fixed() && (*w.shape)[2].value == 0) {
      return Claim::decline("input size 0: oneDNN's RNN primitives need a positive input size");
    }
  }
  return Claim::accept();
}

RECUR_LOAD_PATH Claim claim_default_activations(const RnnSpec& spec, const char* fixed) {
  if (spec.default_activations()) return Claim::accept();
  std::string names;
  for (const auto& a : spec.activations) {
    if (!names.empty()) names += ',';
    names += a.name();
  }
  const char* cell = spec.cell == RnnCell::kLstm ? "LSTM" : "GRU";
  return Claim::decline(std::string("non-default ") + cell + " activations (" + names +
                        "): oneDNN's " + cell + " is fixed to " + fixed);
}

RECUR_LOAD_PATH Claim claim_alpha_beta(const Node& node, const RnnSpec& spec) {
  // After the activation checks the only parameterised activation an RNN can have is
  // LeakyRelu, whose alpha oneDNN takes as the relu's negative slope.
  if (spec.alpha_beta_given && (spec.cell != RnnCell::kRnn || node.attr("activation_beta"))) {
    return Claim::decline(
        "activation_alpha/activation_beta: oneDNN takes only LeakyRelu's alpha on RNN");
  }
  return Claim::accept();
}

}  // namespace recur::onednn
