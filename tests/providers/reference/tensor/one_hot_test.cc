// OneHot with float indices, negative and out-of-range indices, and bad depth or values.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Outputs one_hot(const Tensor& idx, const Tensor& depth, const Tensor& values, int64_t axis) {
  return OpTester("OneHot", 11)
      .input("i", idx)
      .input("d", depth)
      .input("v", values)
      .attr("axis", axis)
      .output("y")
      .run({{"i", idx}, {"d", depth}, {"v", values}});
}

TEST(OneHot, FloatIndicesOnAxis0) {
  // Indices truncate to 0, -1 (-> 2), 3 and -5; the last two are out of range for depth 3 and
  // give a column of off values. numpy: y = np.full((3, 4), 2); y[0, 0] = y[2, 1] = 9
  Outputs o = one_hot(Tensor::from_vector<double>({4}, {0.7, -1.0, 3.0, -5.0}),
                      Tensor::scalar<float>(3.0f), Tensor::from_vector<int32_t>({2}, {2, 9}), 0);
  EXPECT_EQ(o[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{9, 2, 2, 2, 2, 2, 2, 2, 2, 9, 2, 2}));
}

TEST(OneHot, BadArgumentsAreErrors) {
  const Tensor idx = Tensor::from_vector<int64_t>({2}, {0, 1});
  const Tensor values = Tensor::from_vector<float>({2}, {0, 1});
  std::string msg = error_of([&] { one_hot(idx, Tensor::scalar<int64_t>(-2), values, -1); });
  EXPECT_NE(msg.find("node 'node' (OneHot)"), std::string::npos) << msg;
  msg = error_of([&] {
    one_hot(idx, Tensor::scalar<int64_t>(2), Tensor::from_vector<float>({3}, {0, 1, 2}), -1);
  });
  EXPECT_NE(msg.find("two elements"), std::string::npos) << msg;
  msg = error_of([&] { one_hot(idx, Tensor::scalar<int64_t>(2), values, 2); });
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  msg = error_of([&] {
    one_hot(idx, Tensor::scalar<float>(std::numeric_limits<float>::quiet_NaN()), values, -1);
  });
  EXPECT_NE(msg.find("depth"), std::string::npos) << msg;
}

}  // namespace
}  // namespace recur::test
