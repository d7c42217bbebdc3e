// One ONNX LSTM/GRU/RNN node as a model, for the cudnn provider's tests: attributes, optional
// inputs, output subsets, dtype, and weights as constants or graph inputs.
#pragma once

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"

namespace recur::testing {

struct RnnCase {
  std::string op = "LSTM";
  std::string direction = "forward";
  int layout = 0;
  int64_t T = 4, N = 3, I = 5, H = 6;
  DType dtype = DType::kFloat32;
  bool bias = true;
  bool seq_lens = false;  // a graph input "sequence_lens"
  bool initial_h = false;
  bool initial_c = false;
  enum class Peepholes { kNone, kZero, kNonZero, kInput } p = Peepholes::kNone;
  bool weights_as_inputs = false;
  bool y = true, y_h = true, y_c = true;  // outputs present
  int opset = 17;
  int gru_linear_before_reset = 1;  // -1: attribute left out (ONNX's default, 0)
  float weight_scale = 0.3f;
  uint32_t seed = 1;
  std::function<void(onnx::NodeProto&)> attrs;  // extra attributes

  int64_t D() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t G() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  std::string describe() const {
    return op + " " + direction + " layout=" + std::to_string(layout) + " T=" + std::to_string(T) +
           " N=" + std::to_string(N) + " I=" + std::to_string(I) + " H=" + std::to_string(H) + " " +
           std::string(dtype_name(dtype)) + (bias ? "" : " no-B") + (seq_lens ? " lens" : "") +
           (initial_h ? " h0" : "") + (initial_c ? " c0" : "") +
           (weights_as_inputs ? " W-inputs" : "") + " outputs:" + (y ? "Y" : "") +
           (y_h ? ",Y_h" : "") + (y_c && op == "LSTM" ? ",Y_c" : "") +
           " seed=" + std::to_string(seed);
  }
};

inline Tensor random_tensor(DType dtype, const Shape& shape, float scale, std::mt19937& rng) {
  Tensor t = Tensor::empty(dtype, shape);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = scale * normal(rng);
    if (dtype == DType::kFloat16) {
      t.data<Float16>()[i] = Float16(v);
    } else if (dtype == DType::kFloat64) {
      t.data<double>()[i] = v;
    } else {
      t.data<float>()[i] = v;
    }
  }
  return t;
}

// The model, and the feeds for it (random X, states and lengths).
struct RnnModel {
  std::string bytes;
  Feeds feeds;
};

inline RnnModel build_rnn_model(const RnnCase& c, const std::vector<int32_t>& lengths = {}) {
  std::mt19937 rng(c.seed);
  ModelBuilder mb(c.opset);
  const int64_t D = c.D(), G = c.G(), H = c.H;
  const Shape x_shape = c.layout == 0 ? Shape{c.T, c.N, c.I} : Shape{c.N, c.T, c.I};
  const Shape s_shape = c.layout == 0 ? Shape{D, c.N, H} : Shape{c.N, D, H};
  const Shape y_shape = c.layout == 0 ? Shape{c.T, D, c.N, H} : Shape{c.N, c.T, D, H};
  RnnModel m;
  mb.input("X", c.dtype, x_shape);
  m.feeds.emplace_back("X", random_tensor(c.dtype, x_shape, 1.0f, rng));
  auto weight = [&](const std::string& name, const Shape& shape) {
    Tensor t = random_tensor(c.dtype, shape, c.weight_scale, rng);
    if (c.weights_as_inputs) {
      mb.input(name, c.dtype, shape);
      m.feeds.emplace_back(name, t);
    } else {
      mb.initializer(name, t);
    }
  };
  weight("W", {D, G * H, c.I});
  weight("R", {D, G * H, H});
  std::vector<std::string> ins = {"X", "W", "R"};
  if (c.bias) weight("B", {D, 2 * G * H});
  ins.push_back(c.bias ? "B" : "");
  if (c.seq_lens) {
    mb.input("sequence_lens", DType::kInt32, {c.N});
    std::vector<int32_t> lens = lengths;
    if (lens.empty()) {
      std::uniform_int_distribution<int32_t> u(0, static_cast<int32_t>(c.T));
      for (int64_t n = 0; n < c.N; ++n) lens.push_back(u(rng));
    }
    m.feeds.emplace_back("sequence_lens", Tensor::from_vector<int32_t>({c.N}, lens));
  }
  ins.push_back(c.seq_lens ? "sequence_lens" : "");
  if (c.initial_h) {
    mb.input("initial_h", c.dtype, s_shape);
    m.feeds.emplace_back("initial_h", random_tensor(c.dtype, s_shape, 1.0f, rng));
  }
  ins.push_back(c.initial_h ? "initial_h" : "");
  if (c.op == "LSTM") {
    if (c.initial_c) {
      mb.input("initial_c", c.dtype, s_shape);
      m.feeds.emplace_back("initial_c", random_tensor(c.dtype, s_shape, 1.0f, rng));
    }
    ins.push_back(c.initial_c ? "initial_c" : "");
    if (c.p != RnnCase::Peepholes::kNone) {
      const Shape ps{D, 3 * H};
      if (c.p == RnnCase::Peepholes::kInput) {
        mb.input("P", c.dtype, ps);
        m.feeds.emplace_back("P", random_tensor(c.dtype, ps, c.weight_scale, rng));
      } else if (c.p == RnnCase::Peepholes::kZero) {
        Tensor z = Tensor::empty(c.dtype, ps);
        std::memset(z.raw_data(), 0, z.nbytes());
        mb.initializer("P", z);
      } else {
        mb.initializer("P", random_tensor(c.dtype, ps, c.weight_scale, rng));
      }
      ins.push_back("P");
    }
  }
  while (!ins.empty() && ins.back().empty()) ins.pop_back();
  std::vector<std::string> outs = {c.y ? "Y" : "", c.y_h ? "Y_h" : ""};
  if (c.op == "LSTM") outs.push_back(c.y_c ? "Y_c" : "");
  while (!outs.empty() && outs.back().empty()) outs.pop_back();
  if (c.y) mb.output("Y", c.dtype, y_shape, true);
  if (c.y_h) mb.output("Y_h", c.dtype, s_shape, true);
  if (c.op == "LSTM" && c.y_c) mb.output("Y_c", c.dtype, s_shape, true);
  onnx::NodeProto& n = mb.node(c.op, ins, outs, "rnn");
  set_attr(n, "hidden_size", c.H);
  if (c.direction != "forward") set_attr(n, "direction", c.direction);
  if (c.layout != 0) set_attr(n, "layout", static_cast<int64_t>(c.layout));
  if (c.op == "GRU" && c.gru_linear_before_reset >= 0) {
    set_attr(n, "linear_before_reset", static_cast<int64_t>(c.gru_linear_before_reset));
  }
  if (c.attrs) c.attrs(n);
  m.bytes = mb.bytes();
  return m;
}

// The assignment of the model's single RNN node.
inline NodeAssignment plan_rnn(const RnnCase& c, std::vector<std::string> providers) {
  const RnnModel m = build_rnn_model(c);
  Session s = Session::from_bytes(m.bytes.data(), m.bytes.size(),
                                  SessionOptions().providers(std::move(providers)).plan_only(true));
  return s.assignment().at(0);
}

// tests/data, or $RECUR_TEST_DATA_DIR where the tests run from a bundle on another machine.
inline std::string test_data_dir() {
  const char* env = std::getenv("RECUR_TEST_DATA_DIR");
  return env && *env ? env : RECUR_TEST_DATA_DIR;
}

inline bool cudnn_compiled_in() {
  for (const auto& p : list_providers())
    if (p.name == "cudnn") return true;
  return false;
}

inline bool cuda_device_present(std::string* why = nullptr) {
  for (const auto& p : list_providers()) {
    if (p.name == "cudnn") {
      if (why) *why = p.reason;
      return p.available;
    }
  }
  if (why) *why = "this build has no CUDA provider";
  return false;
}

}  // namespace recur::testing
