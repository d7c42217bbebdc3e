// Col2Im (opset 18): each image pixel is the sum of the block entries that cover it.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Col2Im, OverlappingBlocksAdd) {
  // 2x2 blocks at stride 1 over a 3x3 image: 4 positions; with all-ones columns each pixel
  // counts the blocks covering it.
  OpTester("Col2Im", 18)
      .input(tensor<float>({1, 4, 4}, std::vector<float>(16, 1.0f)))
      .constant(tensor<int64_t>({2}, {3, 3}))
      .constant(tensor<int64_t>({2}, {2, 2}))
      .expect<float>({1, 1, 3, 3}, {1, 2, 1, 2, 4, 2, 1, 2, 1})
      .check();
}

TEST(Col2Im, StridesAndPadsPlaceEachBlock) {
  // 1x2 blocks, stride 2, one column of padding each side over a 1x4 image: blocks cover
  // columns [-1, 0], [1, 2], [3, 4]; the padded halves are dropped.
  OpTester("Col2Im", 18)
      .input(tensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6}))
      .constant(tensor<int64_t>({2}, {1, 4}))
      .constant(tensor<int64_t>({2}, {1, 2}))
      .attr("strides", std::vector<int64_t>{1, 2})
      .attr("pads", std::vector<int64_t>{0, 1, 0, 1})
      .expect<float>({1, 1, 1, 4}, {4, 2, 5, 3})
      .check();
}

TEST(Col2Im, BlockCountMustMatch) {
  OpTester("Col2Im", 18)
      .input(tensor<float>({1, 4, 3}, std::vector<float>(12, 1.0f)))
      .constant(tensor<int64_t>({2}, {3, 3}))
      .constant(tensor<int64_t>({2}, {2, 2}))
      .expect_error(ErrorCode::kInvalidArgument, "4 positions")
      .check();
}

}  // namespace
}  // namespace recur::test
