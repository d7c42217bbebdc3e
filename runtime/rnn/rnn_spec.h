// The ONNX RNN model shared by every provider: attributes with their defaults resolved, the
// gate orders, and the checks that inputs agree with each other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"

namespace recur {

enum class RnnCell { kLstm, kGru, kRnn };
enum class RnnDirection { kForward, kReverse, kBidirectional };

// The positions of an RNN node's inputs and outputs.
enum RnnInput : size_t {
  kRnnX = 0,
  kRnnW,
  kRnnR,
  kRnnB,
  kRnnSeqLens,
  kRnnInitialH,
  kRnnInitialC,
  kRnnP
};
enum RnnOutput : size_t { kRnnY = 0, kRnnYh, kRnnYc };

struct RnnActivation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,           // alpha*x + beta
    kLeakyRelu,        // x >= 0 ? x : alpha*x
    kThresholdedRelu,  // x > alpha ? x : 0
    kScaledTanh,       // alpha*tanh(beta*x)
    kHardSigmoid,      // max(0, min(1, alpha*x + beta))
    kElu,              // x >= 0 ? x : alpha*(exp(x)-1)
    kSoftsign,         // x / (1 + |x|)
    kSoftplus,         // log(1 + exp(x))
  };
  Kind kind = Kind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;

  const char* name() const;
  bool operator==(const RnnActivation&) const = default;
};

struct RnnSpec {
  RnnCell cell = RnnCell::kLstm;
  RnnDirection direction = RnnDirection::kForward;
  int64_t hidden_size = -1;  // -1 when the attribute is absent: taken from R's shape
  int layout = 0;            // 0: X [T,N,I]; 1: X [N,T,I] (opset 14+)
  std::optional<float> clip;
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
  // Per direction, in ONNX's order: LSTM f,g,h; GRU f,g; RNN f. Size per_direction()*D.
  std::vector<RnnActivation> activations;
  bool activations_given = false;  // the model set `activations`
  bool alpha_beta_given = false;   // the model set activation_alpha or activation_beta

  static Result<RnnSpec> parse(const Node& node);

  int num_directions() const { return direction == RnnDirection::kBidirectional ? 2 : 1; }
  int num_gates() const { return cell == RnnCell::kLstm ? 4 : cell == RnnCell::kGru ? 3 : 1; }
  int activations_per_direction() const {
    return cell == RnnCell::kLstm ? 3 : cell == RnnCell::kGru ? 2 : 1;
  }
  const RnnActivation& activation(int dir, int k) const {
    return activations[static_cast<size_t>(dir * activations_per_direction() + k)];
  }
  // True when every activation is the cell's default (LSTM sigmoid,tanh,tanh; GRU
  // sigmoid,tanh; RNN tanh).
  bool default_activations() const;
  const char* cell_name() const;
};

// Sizes of one RNN invocation, checked against each other.
struct RnnDims {
  int64_t seq_length = 0;  // T
  int64_t batch = 0;       // N
  int64_t input_size = 0;  // I
  int64_t hidden = 0;      // H
  int64_t directions = 1;  // D
};

// Checks the shapes of X, W, R and the optional inputs against each other and the spec, and
// the sequence lengths against T (0 <= len <= T). Tensors may be null for absent inputs;
// `seq_lens` may be on a device, in which case its values are not checked. Errors name the
// node and the input.
Result<RnnDims> check_rnn_inputs(const Node& node, const RnnSpec& spec, const Tensor* x,
                                 const Tensor* w, const Tensor* r, const Tensor* b,
                                 const Tensor* seq_lens, const Tensor* initial_h,
                                 const Tensor* initial_c, const Tensor* p);

// Whether hidden size H and input size I keep every size derived from them (weights, biases,
// peepholes, in elements and bytes, here and in the weight converters) within int64_t;
// otherwise an error naming the node, with `code`.
Status check_rnn_size_limits(const Node& node, const RnnSpec& spec, int64_t H, int64_t I,
                             ErrorCode code);

// Static shape rule for LSTM, GRU and RNN; also checks hidden_size against constant W and R.
Status infer_rnn(InferContext& ctx);

// ONNX's gate order within W, R and B, by gate name: LSTM i,o,f,c; GRU z,r,h; RNN one gate.
// The converters to oneDNN's and cuDNN's layouts permute these blocks.
inline constexpr int kOnnxLstmI = 0, kOnnxLstmO = 1, kOnnxLstmF = 2, kOnnxLstmC = 3;
inline constexpr int kOnnxGruZ = 0, kOnnxGruR = 1, kOnnxGruH = 2;

}  // namespace recur
