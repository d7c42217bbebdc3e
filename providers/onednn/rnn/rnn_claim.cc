// The claim rules shared by the oneDNN LSTM, GRU and RNN kernels (see rnn_common.h).
#include <string>

#include "providers/onednn/common/dnnl_util.h"
#include "providers/onednn/rnn/rnn_common.h"
#include "providers/onednn/rnn/small_cell.h"
#include "runtime/core/code_layout.h"

namespace recur::onednn {

namespace {

RECUR_LOAD_PATH Claim claim_input(const Node& node, const Graph& graph) {
  if (node.has_input(kRnnX)) {
    const DType dt = graph.value(node.inputs[kRnnX]).type.dtype;
    if (dt != DType::kFloat32 && dt != DType::kUndefined) {
      return Claim::decline("oneDNN RNN primitives run float32 here, X is " +
                            std::string(dtype_name(dt)));
    }
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

RECUR_LOAD_PATH std::string activations_declined(const RnnSpec& spec) {
  using Kind = RnnActivation::Kind;
  if (spec.cell == RnnCell::kRnn) {
    for (const auto& a : spec.activations) {
      if (a.kind != Kind::kTanh && a.kind != Kind::kRelu && a.kind != Kind::kSigmoid &&
          a.kind != Kind::kLeakyRelu)
        return std::string("RNN activation ") + a.name() +
               " has no oneDNN equivalent (it has Tanh, Relu, Sigmoid, LeakyRelu)";
    }
    return "";
  }
  if (spec.default_activations()) return "";
  std::string names;
  for (const auto& a : spec.activations) {
    if (!names.empty()) names += ',';
    names += a.name();
  }
  const bool lstm = spec.cell == RnnCell::kLstm;
  const char* cell = lstm ? "LSTM" : "GRU";
  return std::string("non-default ") + cell + " activations (" + names + "): oneDNN's " + cell +
         " is fixed to " + (lstm ? "Sigmoid,Tanh,Tanh" : "Sigmoid,Tanh");
}

}  // namespace

RECUR_LOAD_PATH std::string primitive_math_declined(const Node& node, const RnnSpec& spec) {
  if (spec.clip) {
    return "clip=" + std::to_string(*spec.clip) +
           ": oneDNN's RNN primitives cannot bound the gate pre-activations";
  }
  std::string why = activations_declined(spec);
  if (!why.empty()) return why;
  // After the activation checks the only parameterised activation an RNN can have is
  // LeakyRelu, whose alpha oneDNN takes as the relu's negative slope.
  if (spec.alpha_beta_given && (spec.cell != RnnCell::kRnn || node.attr("activation_beta")))
    return "activation_alpha/activation_beta: oneDNN takes only LeakyRelu's alpha on RNN";
  return "";
}

RECUR_LOAD_PATH Claim claim_rnn(const Node& node, const Graph& graph,
                                const ProviderOptions& options) {
  auto spec = RnnSpec::parse(node);
  if (!spec.ok()) return Claim::decline(spec.status().message());
  Claim c = claim_input(node, graph);
  if (!c.yes) return c;
  const std::string math = primitive_math_declined(node, *spec);
  if (math.empty()) return Claim::accept();
  std::string own;
  if (!static_cast<const OnednnOptions&>(options).small_cells) {
    own = "onednn.impl asks for oneDNN's primitive";
  } else {
    own = small_kernel_declined(node, graph, *spec);
  }
  if (own.empty()) return Claim::accept();
  return Claim::decline(math + "; recur's own kernels, which run it, cannot: " + own);
}

}  // namespace recur::onednn
