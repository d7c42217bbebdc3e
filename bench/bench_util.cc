#include "bench/bench_util.h"

#include "tests/support/model_builder.h"

namespace recur::bench {

std::string rnn_model_bytes(const std::string& op, int64_t T, int64_t N, int64_t I, int64_t H) {
  const int64_t G = gates_of(op);
  testing::ModelBuilder m(14, 7);
  m.input("X", DType::kFloat32, {T, N, I});
  m.output("Y", DType::kFloat32);
  m.output("Y_h", DType::kFloat32);
  auto tensor = [](const Shape& s, uint64_t seed) {
    Tensor t = Tensor::empty(DType::kFloat32, s);
    const auto v = random_floats(static_cast<size_t>(t.numel()), seed);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
  };
  m.initializer("W", tensor({1, G * H, I}, 1));
  m.initializer("R", tensor({1, G * H, H}, 2));
  m.initializer("B", tensor({1, 2 * G * H}, 3));
  auto& n = m.node(op, {"X", "W", "R", "B"}, {"Y", "Y_h"}, "rnn");
  testing::set_attr(n, "hidden_size", H);
  if (op == "GRU") testing::set_attr(n, "linear_before_reset", int64_t{1});
  return m.bytes();
}

bool provider_usable(const std::string& name, std::string* why) {
  for (const auto& p : list_providers()) {
    if (p.name != name) continue;
    if (!p.available) *why = name + " unavailable: " + p.reason;
    return p.available;
  }
  *why = name + " is not in this build";
  return false;
}

}  // namespace recur::bench
