// Opset 22 only widened LSTM, GRU and RNN to bfloat16: one step of a one-unit cell, with the
// 16-bit inputs exactly representable. Expected: Y_h = tanh(0.5) = 0.462117 for RNN, and for
// LSTM with W = 1, R = 0: c = sigmoid(0.5) * tanh(0.5) = 0.287649, h = sigmoid(0.5) * tanh(c)
// = 0.174270. The tolerance is that of the 16-bit outputs.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

template <class T>
Tensor filled(const Shape& shape, float v) {
  return Tensor::from_vector<T>(shape,
                                std::vector<T>(static_cast<size_t>(shape_numel(shape)), T(v)));
}

TEST(RnnOpset22, RnnRunsBFloat16) {
  OpTester("RNN", 22)
      .input("X", filled<BFloat16>({1, 1, 1}, 0.5f))
      .input("W", filled<BFloat16>({1, 1, 1}, 1.0f))
      .input("R", filled<BFloat16>({1, 1, 1}, 1.0f))
      .attr("hidden_size", int64_t{1})
      .output("Y")
      .output("Y_h")
      .expect<BFloat16>({1, 1, 1, 1}, {BFloat16(0.462117f)}, 1e-2)
      .expect<BFloat16>({1, 1, 1}, {BFloat16(0.462117f)}, 1e-2)
      .check();
}

TEST(RnnOpset22, LstmRunsFloat16AndBFloat16) {
  auto check = [](auto tag) {
    using T = typename decltype(tag)::type;
    OpTester("LSTM", 22)
        .input("X", filled<T>({1, 1, 1}, 0.5f))
        .input("W", filled<T>({1, 4, 1}, 1.0f))
        .input("R", filled<T>({1, 4, 1}, 0.0f))
        .attr("hidden_size", int64_t{1})
        .output("Y")
        .output("Y_h")
        .output("Y_c")
        .template expect<T>({1, 1, 1, 1}, {T(0.174270f)}, 1e-2)
        .template expect<T>({1, 1, 1}, {T(0.174270f)}, 1e-2)
        .template expect<T>({1, 1, 1}, {T(0.287649f)}, 1e-2)
        .check();
  };
  check(std::type_identity<Float16>{});
  check(std::type_identity<BFloat16>{});
}

TEST(RnnOpset22, GruRunsBFloat16) {
  // z = r = sigmoid(0.5), h~ = tanh(0.5), h = (1 - z) * h~ = 0.377541 * 0.462117 = 0.174468
  OpTester("GRU", 22)
      .input("X", filled<BFloat16>({1, 1, 1}, 0.5f))
      .input("W", filled<BFloat16>({1, 3, 1}, 1.0f))
      .input("R", filled<BFloat16>({1, 3, 1}, 0.0f))
      .attr("hidden_size", int64_t{1})
      .output("Y")
      .output("Y_h")
      .expect<BFloat16>({1, 1, 1, 1}, {BFloat16(0.174468f)}, 1e-2)
      .expect<BFloat16>({1, 1, 1}, {BFloat16(0.174468f)}, 1e-2)
      .check();
}

}  // namespace
}  // namespace recur::test
