// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: weights with higher-dimensional inputs,
// every target ignored, labels out of range, and the log_prob output. Expected values are the
// ONNX reference's numpy formulas, worked out in the comments.
#include <cmath>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(NegativeLogLikelihoodLoss, WeightedSumAndMeanOverExtraDims) {
  // input[0, c, d] = [[-1, -2], [-3, -4]], target [[0, 1]], weight [0.5, 2]:
  // losses [1 * 0.5, 4 * 2] -> sum 8.5, mean 8.5 / (0.5 + 2) = 3.4
  auto model = [](const std::string& reduction) {
    return OpTester("NegativeLogLikelihoodLoss", 13)
        .input(tensor<float>({1, 2, 2}, {-1, -2, -3, -4}))
        .input(tensor<int64_t>({1, 2}, {0, 1}))
        .input(tensor<float>({2}, {0.5f, 2.0f}))
        .attr("reduction", reduction);
  };
  expect_tensor<float>(model("sum").run()[0], {}, {8.5f});
  expect_tensor<float>(model("mean").run()[0], {}, {3.4f});
  expect_tensor<float>(model("none").run()[0], {1, 2}, {0.5f, 8.0f});
}

TEST(NegativeLogLikelihoodLoss, EveryTargetIgnoredGivesNaNMean) {
  // loss.sum() / weight.sum() = 0 / 0 in numpy: nan
  auto y = OpTester("NegativeLogLikelihoodLoss", 13)
               .input(tensor<double>({2, 3}, {-1, -2, -3, -4, -5, -6}))
               .input(tensor<int32_t>({2}, {1, 1}))
               .attr("ignore_index", int64_t{1})
               .run();
  expect_tensor<double>(y[0], {}, {kNaN});
}

TEST(NegativeLogLikelihoodLoss, BadTargetsAndShapesAreErrors) {
  expect_error(OpTester("NegativeLogLikelihoodLoss", 13)
                   .input(tensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}))
                   .input(tensor<int64_t>({2}, {0, 3})),
               ErrorCode::kOutOfRange, "target 3 is out of range");
  expect_error(OpTester("NegativeLogLikelihoodLoss", 13)
                   .input(tensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}))
                   .input(tensor<int64_t>({3}, {0, 1, 2})),
               ErrorCode::kInvalidArgument, "node 'node' (NegativeLogLikelihoodLoss)");
  expect_error(OpTester("NegativeLogLikelihoodLoss", 13)
                   .input(tensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}))
                   .input(tensor<int64_t>({2}, {0, 1}))
                   .input(tensor<float>({2}, {1, 1})),
               ErrorCode::kInvalidArgument, "weight");
}

TEST(SoftmaxCrossEntropyLoss, LogProbOutputAndIgnoredLabels) {
  // scores [[0, ln 3]]: softmax [1/4, 3/4], log_prob [-ln 4, ln 3 - ln 4]; label 0 -> ln 4
  const float ln3 = std::log(3.0f);
  auto y = OpTester("SoftmaxCrossEntropyLoss", 13)
               .input(tensor<float>({1, 2}, {0.0f, ln3}))
               .input(tensor<int64_t>({1}, {0}))
               .attr("reduction", std::string("none"))
               .outputs(2)
               .run();
  expect_tensor<float>(y[0], {1}, {std::log(4.0f)});
  expect_tensor<float>(y[1], {1, 2}, {-std::log(4.0f), ln3 - std::log(4.0f)});
  // A label equal to a negative ignore_index adds nothing: sum 0.
  auto z = OpTester("SoftmaxCrossEntropyLoss", 13)
               .input(tensor<float>({2, 2}, {0.0f, ln3, 5.0f, 1.0f}))
               .input(tensor<int64_t>({2}, {0, -1}))
               .attr("ignore_index", int64_t{-1})
               .attr("reduction", std::string("sum"))
               .run();
  expect_tensor<float>(z[0], {}, {std::log(4.0f)});
}

TEST(SoftmaxCrossEntropyLoss, LargeScoresAreStable) {
  // log_softmax([1000, 0]) = [0, -1000] without overflow; label 1 -> loss 1000
  auto y = OpTester("SoftmaxCrossEntropyLoss", 13)
               .input(tensor<float>({1, 2}, {1000.0f, 0.0f}))
               .input(tensor<int64_t>({1}, {1}))
               .run();
  expect_tensor<float>(y[0], {}, {1000.0f});
}

}  // namespace
}  // namespace recur::test
