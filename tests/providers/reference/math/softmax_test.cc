// Softmax, LogSoftmax, Hardmax: the opset-13 change of semantics (2D coercion before it),
// large inputs, ties. Expected values are numpy float64 (expressions in the comments).
#include <gtest/gtest.h>

#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

std::vector<double> ramp24() {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[static_cast<size_t>(i)] = i / 10.0;
  return v;
}

TEST(Softmax, Opset11CoercesTo2D) {
  // x = np.arange(24).reshape(2, 3, 4) / 10; f = x.reshape(2, 12);
  // e = np.exp(f - f.max(1, keepdims=True)); (e / e.sum(1, keepdims=True)).reshape(2, 3, 4)
  auto y = OpTester("Softmax", 11)
               .input(tensor<double>({2, 3, 4}, ramp24()))
               .attr("axis", int64_t{1})
               .run();
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 4}));
  const double* p = y[0].data<double>();
  EXPECT_NEAR(p[0], 0.04533000774443725, 1e-12);
  EXPECT_NEAR(p[1], 0.05009740627529595, 1e-12);
  EXPECT_NEAR(p[22], 0.12321973633561159, 1e-12);
  EXPECT_NEAR(p[23], 0.13617886913106705, 1e-12);
}

TEST(Softmax, Opset13IsAlongTheAxis) {
  // e = np.exp(x - x.max(1, keepdims=True)); e / e.sum(1, keepdims=True)
  auto y = OpTester("Softmax", 13)
               .input(tensor<double>({2, 3, 4}, ramp24()))
               .attr("axis", int64_t{1})
               .run();
  const double* p = y[0].data<double>();
  EXPECT_NEAR(p[0], 0.21198272070752777, 1e-12);
  EXPECT_NEAR(p[1], 0.21198272070752777, 1e-12);
  EXPECT_NEAR(p[22], 0.4717762210677908, 1e-12);
  EXPECT_NEAR(p[23], 0.4717762210677907, 1e-12);
}

TEST(Softmax, LogSoftmaxOfLargeValues) {
  // x = [1000, 1001, 1002]; x - x.max() - np.log(np.exp(x - x.max()).sum())
  auto y = OpTester("LogSoftmax", 13).input(tensor<float>({1, 3}, {1000, 1001, 1002})).run();
  expect_tensor<float>(y[0], {1, 3},
                       {-2.4076059644443806f, -1.4076059644443804f, -0.40760596444438035f}, 1e-6);
}

TEST(Softmax, HardmaxTakesTheFirstMaximum) {
  // np.eye(3)[np.argmax(np.array([[1, 3, 3], [2, 1, 0]]), axis=1)]
  auto y = OpTester("Hardmax", 13).input(tensor<float>({2, 3}, {1, 3, 3, 2, 1, 0})).run();
  expect_tensor<float>(y[0], {2, 3}, {0, 1, 0, 1, 0, 0});
}

TEST(Softmax, AxisOutOfRangeIsAnError) {
  expect_error(OpTester("Softmax", 13)
                   .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .attr("axis", int64_t{2}),
               ErrorCode::kOutOfRange, "axis 2");
}

}  // namespace
}  // namespace recur::test
