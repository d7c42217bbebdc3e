// Dropout at inference across opsets: the mask's dtype, the ratio and training_mode inputs.
// Training mode with a nonzero ratio: tests/providers/reference/random/random_ops_test.cc.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

const Tensor kX = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});

TEST(Dropout, Opset7MaskHasTheInputsDtype) {
  Outputs o = OpTester("Dropout", 7).input("x", kX).output("y").output("m").run({{"x", kX}});
  // y is x; the session hands out a copy, as the caller owns x.
  EXPECT_NE(o[0].raw_data(), kX.raw_data());
  EXPECT_EQ(values<float>(o[0]), values<float>(kX));
  EXPECT_EQ(o[1].dtype(), DType::kFloat32);
  EXPECT_EQ(values<float>(o[1]), (std::vector<float>{1, 1, 1, 1}));
}

TEST(Dropout, Opset13InferenceAndTrainingWithZeroRatio) {
  OpTester m = OpTester("Dropout", 13)
                   .input("x", kX)
                   .input("r", DType::kFloat32, {})
                   .input("t", DType::kBool, {})
                   .output("y")
                   .output("m");
  const Session s = m.session();
  for (const auto& [ratio, training] :
       std::vector<std::pair<float, bool>>{{0.5f, false}, {0.0f, true}}) {
    Outputs o = s.run(
        {{"x", kX}, {"r", Tensor::scalar<float>(ratio)}, {"t", Tensor::scalar<bool>(training)}});
    EXPECT_EQ(values<float>(o[0]), values<float>(kX));
    EXPECT_EQ(o[1].dtype(), DType::kBool);
    EXPECT_EQ(values<bool>(o[1]), (std::vector<bool>{true, true, true, true}));
  }
}

}  // namespace
}  // namespace recur::test
