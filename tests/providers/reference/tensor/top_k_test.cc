// TopK: ties keep index order, smallest, the opset-1 attribute form, and k out of range.
// Expected values from numpy's stable argsort.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

const Tensor kX = Tensor::from_vector<int32_t>({5}, {1, 3, 2, 3, 1});

Outputs top_k(const Tensor& x, int64_t k, int64_t largest, int64_t axis = -1) {
  return OpTester("TopK", 11)
      .input("x", x)
      .input("k", DType::kInt64, {1})
      .attr("largest", largest)
      .attr("axis", axis)
      .output("v")
      .output("i")
      .run({{"x", x}, {"k", Tensor::from_vector<int64_t>({1}, {k})}});
}

TEST(TopK, TiesKeepIndexOrder) {
  // numpy: o = np.argsort(-x, kind='stable')[:3]
  Outputs o = top_k(kX, 3, 1);
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{3, 3, 2}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{1, 3, 2}));
  // numpy: o = np.argsort(x, kind='stable')[:2]
  Outputs s = top_k(kX, 2, 0);
  EXPECT_EQ(values<int32_t>(s[0]), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(values<int64_t>(s[1]), (std::vector<int64_t>{0, 4}));
}

TEST(TopK, AlongTheFirstAxis) {
  const Tensor x = Tensor::from_vector<float>({3, 2}, {4, 1, 2, 5, 4, 0});
  // numpy: o = np.argsort(-x, axis=0, kind='stable')[:2]
  Outputs o = top_k(x, 2, 1, 0);
  EXPECT_EQ(values<float>(o[0]), (std::vector<float>{4, 5, 4, 1}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{0, 1, 2, 0}));
}

TEST(TopK, Opset1AttributeK) {
  Outputs o = OpTester("TopK", 1)
                  .input("x", kX)
                  .attr("k", int64_t{1})
                  .output("v")
                  .output("i")
                  .run({{"x", kX}});
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{3}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{1}));
}

TEST(TopK, KOutOfRangeIsAnError) {
  for (int64_t k : {6, -1}) {
    const std::string msg = error_of([&] { top_k(kX, k, 1); });
    EXPECT_NE(msg.find("node 'node' (TopK)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace recur::test
