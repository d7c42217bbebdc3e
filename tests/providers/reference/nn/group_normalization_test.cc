// GroupNormalization: opset 18 scales each group, opset 21 each channel. X = [3, 5, 3, 5] as
// [N=1, C=2, 2] has mean 4 and variance 1 in one group, so it normalises to [-1, 1, -1, 1].
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor x() { return tensor<float>({1, 2, 2}, {3, 5, 3, 5}); }

TEST(GroupNormalization, Opset21ScalesEachChannel) {
  // Channel 0: [-1, 1] * 2 + 0; channel 1: [-1, 1] * 3 + 1.
  OpTester("GroupNormalization", 21)
      .input(x())
      .input(tensor<float>({2}, {2, 3}))
      .input(tensor<float>({2}, {0, 1}))
      .attr("num_groups", int64_t{1})
      .attr("epsilon", 0.0f)
      .expect<float>({1, 2, 2}, {-2, 2, -2, 4}, 1e-6)
      .check();
}

TEST(GroupNormalization, Opset18ScalesEachGroup) {
  // One group: every element * 2 + 1.
  OpTester("GroupNormalization", 18)
      .input(x())
      .input(tensor<float>({1}, {2}))
      .input(tensor<float>({1}, {1}))
      .attr("num_groups", int64_t{1})
      .attr("epsilon", 0.0f)
      .expect<float>({1, 2, 2}, {-1, 3, -1, 3}, 1e-6)
      .check();
}

TEST(GroupNormalization, ScaleSizeFollowsTheOpset) {
  OpTester("GroupNormalization", 21)
      .input(x())
      .input(tensor<float>({1}, {2}))
      .input(tensor<float>({1}, {1}))
      .attr("num_groups", int64_t{1})
      .expect_error(ErrorCode::kInvalidArgument, "2 elements at opset 21")
      .check();
}

}  // namespace
}  // namespace recur::test
