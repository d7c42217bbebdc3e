// Helpers shared by the micro-benchmarks: random weights, and single RNN node models.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "recur/recur.h"

namespace recur::bench {

inline std::vector<float> random_floats(size_t n, uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

inline Tensor random_tensor(const Shape& shape, uint64_t seed = 1) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = normal(rng);
  return t;
}

// The bytes of an ONNX model with one LSTM, GRU (linear_before_reset=1) or RNN node:
// X [T, N, I] -> Y, Y_h; random weights of scale 0.1.
std::string rnn_model_bytes(const std::string& op, int64_t T, int64_t N, int64_t I, int64_t H);

// The gates of an ONNX cell: LSTM 4, GRU 3, RNN 1.
inline int64_t gates_of(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

// Whether this build has the provider and it can run here; `why` says why not.
bool provider_usable(const std::string& name, std::string* why);

}  // namespace recur::bench
