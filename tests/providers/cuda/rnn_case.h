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
#include "tests/support/data_dirs.h"
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
  bool dynamic_batch = false;  // X's batch dimension named, not fixed (its feed keeps N rows)
  bool y = true, y_h = true, y_c = true;  // outputs present
  int opset = 17;
  int gru_linear_before_reset = 1;  // -1: attribute left out (ONNX's default, 0)
  float weight_scale = 0.3f;
  uint32_t seed = 1;
  std::function<void(onnx::NodeProto&)> attrs;  // extra attributes
  std::string attrs_summary;                    // what `attrs` sets, for messages

  int64_t D() const { return direction == "bidirectional" ? 2 : 1; }
  int64_t G() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  std::string describe() const {
    return op + " " + direction + " layout=" + std::to_string(layout) + " T=" + std::to_string(T) +
           " N=" + std::to_string(N) + " I=" + std::to_string(I) + " H=" + std::to_string(H) + " " +
           std::string(dtype_name(dtype)) + (bias ? "" : " no-B") + (seq_lens ? " lens" : "") +
           (initial_h ? " h0" : "") + (initial_c ? " c0" : "") +
           (weights_as_inputs ? " W-inputs" : "") + (dynamic_batch ? " N-named" : "") +
           " outputs:" + (y ? "Y" : "") + (y_h ? ",Y_h" : "") +
           (y_c && op == "LSTM" ? ",Y_c" : "") +
           (attrs_summary.empty() ? "" : " " + attrs_summary) + " seed=" + std::to_string(seed);
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

// A float tensor's values as doubles (float16 and float32 widened).
inline std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto k = static_cast<size_t>(i);
    if (t.dtype() == DType::kFloat16) {
      v[k] = static_cast<float>(t.data<Float16>()[i]);
    } else if (t.dtype() == DType::kFloat64) {
      v[k] = t.data<double>()[i];
    } else {
      v[k] = t.data<float>()[i];
    }
  }
  return v;
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
  if (c.dynamic_batch) {
    const size_t at = c.layout == 0 ? 1 : 0;
    std::vector<int64_t> dims(x_shape.begin(), x_shape.end());
    std::vector<std::string> names(3);
    dims[at] = -1;
    names[at] = "N";
    mb.input("X", c.dtype, dims, names);
  } else {
    mb.input("X", c.dtype, x_shape);
  }
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

// Bounds and switches for random_rnn_case.
struct RandomRnnLimits {
  int64_t max_T = 9, max_N = 7, max_I = 19, max_H = 33;
  int weights_as_inputs_one_in = 6;  // graph-input weights in 1 of n cases
  int float64_one_in = 0;            // float64 in 1 of n cases; 0: float32 only
  bool output_subsets = true;        // a random non-empty subset of Y, Y_h, Y_c
  // Peepholes, GRU linear_before_reset 0/1/absent, custom activations with alpha/beta, clip
  // and input_forget: what only the reference and cuda-generic providers cover.
  bool every_attribute = true;
};

struct RandomRnn {
  RnnCase c;
  std::vector<int32_t> lens;  // sequence_lens when c.seq_lens, zeros included
};

// One random configuration; the same rng state gives the same case.
inline RandomRnn random_rnn_case(std::mt19937& rng, uint32_t seed, const RandomRnnLimits& lim) {
  auto pick = [&](int64_t n) {
    return static_cast<int>(std::uniform_int_distribution<int64_t>(0, n - 1)(rng));
  };
  auto uni = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
  RandomRnn r;
  RnnCase& c = r.c;
  c.seed = seed;
  c.op = std::vector<std::string>{"LSTM", "GRU", "RNN"}[static_cast<size_t>(pick(3))];
  c.direction =
      std::vector<std::string>{"forward", "reverse", "bidirectional"}[static_cast<size_t>(pick(3))];
  c.layout = pick(2);
  c.T = 1 + pick(lim.max_T);
  c.N = 1 + pick(lim.max_N);
  c.I = 1 + pick(lim.max_I);
  c.H = 1 + pick(lim.max_H);
  c.bias = pick(4) != 0;
  c.seq_lens = pick(2) == 0;
  c.initial_h = pick(2) == 0;
  c.initial_c = pick(2) == 0;
  c.weights_as_inputs = pick(lim.weights_as_inputs_one_in) == 0;
  if (lim.float64_one_in > 0 && pick(lim.float64_one_in) == 0) c.dtype = DType::kFloat64;
  if (lim.output_subsets) {
    const int outs = 1 + pick(7);
    c.y = outs & 1;
    c.y_h = outs & 2;
    c.y_c = outs & 4;
    if (c.op != "LSTM" && !c.y && !c.y_h) c.y = true;
  }
  if (lim.every_attribute) {
    c.gru_linear_before_reset = pick(3) - 1;
    if (c.op == "LSTM" && pick(2) == 0) {
      c.p = pick(3) == 0 ? RnnCase::Peepholes::kInput : RnnCase::Peepholes::kNonZero;
    }
    static const std::vector<std::string> acts = {
        "Relu",       "Tanh",        "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
        "ScaledTanh", "HardSigmoid", "Elu",     "Softsign", "Softplus"};
    const int per = c.op == "LSTM" ? 3 : c.op == "GRU" ? 2 : 1;
    std::vector<std::string> names;
    std::vector<float> alphas, betas;
    if (pick(2) == 0) {
      for (int64_t d = 0; d < c.D(); ++d) {
        for (int a = 0; a < per; ++a) {
          names.push_back(acts[static_cast<size_t>(pick(static_cast<int64_t>(acts.size())))]);
          if (pick(2) == 0) alphas.push_back(uni(0.1f, 1.2f));
          if (pick(3) == 0) betas.push_back(uni(-0.5f, 0.8f));
        }
      }
    }
    const bool clip = pick(3) == 0;
    const float clip_v = uni(0.2f, 2.0f);
    const bool input_forget = c.op == "LSTM" && pick(3) == 0;
    c.attrs = [=](onnx::NodeProto& n) {
      if (!names.empty()) set_attr(n, "activations", names);
      if (!alphas.empty()) set_attr(n, "activation_alpha", alphas);
      if (!betas.empty()) set_attr(n, "activation_beta", betas);
      if (clip) set_attr(n, "clip", clip_v);
      if (input_forget) set_attr(n, "input_forget", int64_t{1});
    };
    c.attrs_summary = "activations=" + std::to_string(names.size()) +
                      (clip ? " clip=" + std::to_string(clip_v) : "") +
                      (input_forget ? " input_forget" : "");
  }
  if (c.seq_lens) {
    for (int64_t n = 0; n < c.N; ++n) r.lens.push_back(pick(4) == 0 ? 0 : 1 + pick(c.T));
  }
  return r;
}

// Shapes and types the random configurations never produce, each with the cuda-generic path it
// reaches: float16 weights fed at run time (converted and bias-packed on every run), empty T, N
// and I (no launch at all; a GEMM with K = 0), and for the grid kernel (`grid`: forced on)
// hidden sizes that leave partial chunks and tiles, float64's registers, and a batch larger than
// the rows its shared memory stages at once.
struct EdgeRnn {
  RandomRnn r;
  bool grid = false;
};
inline std::vector<EdgeRnn> edge_rnn_cases() {
  std::vector<EdgeRnn> out;
  auto add = [&](RnnCase c, std::vector<int32_t> lens, bool grid) {
    c.seed = 7000 + static_cast<uint32_t>(out.size());
    c.seq_lens = !lens.empty();
    out.push_back({{c, std::move(lens)}, grid});
  };
  RnnCase c;
  c.dtype = DType::kFloat16;
  c.weights_as_inputs = true;
  c.T = 5, c.N = 3, c.I = 7, c.H = 9;
  c.p = RnnCase::Peepholes::kInput;
  add(c, {5, 0, 2}, false);
  c.p = RnnCase::Peepholes::kNone;
  c.op = "GRU";
  c.gru_linear_before_reset = 0;
  c.direction = "bidirectional";
  add(c, {1, 5, 0}, false);
  add(c, {1, 5, 0}, true);
  RnnCase e;
  e.T = 0;
  add(e, {}, false);
  e.T = 4, e.N = 0, e.op = "GRU";
  add(e, {}, false);
  e.N = 3, e.I = 0, e.op = "RNN";
  add(e, {}, false);
  RnnCase w;
  w.dtype = DType::kFloat64;
  w.T = 3, w.N = 2, w.I = 4, w.H = 256;
  add(w, {3, 1}, true);
  w.dtype = DType::kFloat32;
  w.H = 300;
  add(w, {}, true);
  w.op = "GRU";
  w.gru_linear_before_reset = 0;
  add(w, {2, 3}, true);
  RnnCase big;  // 64 rows of 1024: more than 48 KiB, and on the GPU more than 54 rows staged
  big.op = "RNN";
  big.T = 3, big.N = 64, big.I = 8, big.H = 1024;
  add(big, {}, true);
  return out;
}

// The parity tests' seed and case count: RECUR_PARITY_SEED and RECUR_PARITY_COUNT when set
// (to reproduce or widen a GPU run), else the given defaults.
inline uint32_t parity_seed(uint32_t fallback) {
  const char* v = std::getenv("RECUR_PARITY_SEED");
  return v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
}
inline int parity_count(int fallback) {
  const char* v = std::getenv("RECUR_PARITY_COUNT");
  return v ? std::atoi(v) : fallback;
}

}  // namespace recur::testing
