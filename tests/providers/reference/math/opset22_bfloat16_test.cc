// Opset 22 only widened the types of many operators to bfloat16: the same registrations run
// them. Values are exact in bfloat16 (small integers), so any rounding would show.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor bf16(const Shape& shape, const std::vector<float>& v) {
  std::vector<BFloat16> b;
  for (float f : v) b.push_back(BFloat16(f));
  return Tensor::from_vector<BFloat16>(shape, b);
}

std::vector<float> as_floats(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<float>(t.data<BFloat16>()[i]));
  return v;
}

TEST(Opset22BFloat16, Activations) {
  // HardSwish(x) = x * clip(x / 6 + 0.5, 0, 1); Softsign(x) = x / (1 + |x|); Cos(0) = 1.
  auto h = OpTester("HardSwish", 22).input(bf16({2}, {3, -3})).run();
  EXPECT_EQ(as_floats(h[0]), (std::vector<float>{3, 0}));
  auto s = OpTester("Softsign", 22).input(bf16({2}, {1, -3})).run();
  EXPECT_EQ(as_floats(s[0]), (std::vector<float>{0.5f, -0.75f}));
  auto c = OpTester("Cos", 22).input(bf16({1}, {0})).run();
  EXPECT_EQ(as_floats(c[0]), (std::vector<float>{1}));
  auto r = OpTester("Round", 22).input(bf16({2}, {2.5f, -1.5f})).run();
  EXPECT_EQ(as_floats(r[0]), (std::vector<float>{2, -2}));  // half to even
}

TEST(Opset22BFloat16, ConvAndPooling) {
  // A 1-tap kernel of weight 2 doubles; a 2-wide average of [1, 3] is 2.
  auto c = OpTester("Conv", 22).input(bf16({1, 1, 2}, {1, 2})).input(bf16({1, 1, 1}, {2})).run();
  EXPECT_EQ(as_floats(c[0]), (std::vector<float>{2, 4}));
  auto a = OpTester("AveragePool", 22)
               .input(bf16({1, 1, 2}, {1, 3}))
               .attr("kernel_shape", std::vector<int64_t>{2})
               .run();
  EXPECT_EQ(as_floats(a[0]), (std::vector<float>{2}));
  auto g = OpTester("GlobalMaxPool", 22).input(bf16({1, 1, 3}, {1, 5, 3})).run();
  EXPECT_EQ(as_floats(g[0]), (std::vector<float>{5}));
}

}  // namespace
}  // namespace recur::test
