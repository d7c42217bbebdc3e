// CenterCropPad (opset 18): a crop starts at floor((in - out) / 2), a pad puts the odd element
// on the right, and `axes` picks the dimensions `shape` applies to.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(CenterCropPad, CropAndPadOneAxisEach) {
  // Rows 4 -> 2 keep rows 1..2; columns 1 -> 4 put the column at index 1 (pads 1 left, 2 right).
  OpTester("CenterCropPad", 18)
      .input(tensor<int32_t>({4, 1}, {10, 11, 12, 13}))
      .constant(tensor<int64_t>({2}, {2, 4}))
      .expect<int32_t>({2, 4}, {0, 11, 0, 0, 0, 12, 0, 0})
      .check();
}

TEST(CenterCropPad, AxesSubsetAndOddCrop) {
  // Axis -1 of [1, 5] cropped to 2 starts at floor(3 / 2) = 1.
  OpTester("CenterCropPad", 18)
      .input(tensor<float>({1, 5}, {0, 1, 2, 3, 4}))
      .constant(tensor<int64_t>({1}, {2}))
      .attr("axes", std::vector<int64_t>{-1})
      .expect<float>({1, 2}, {1, 2})
      .check();
}

TEST(CenterCropPad, ShapeLengthMustMatchAxes) {
  OpTester("CenterCropPad", 18)
      .input(tensor<float>({1, 5}, {0, 1, 2, 3, 4}))
      .input(tensor<int64_t>({1}, {2}))
      .dynamic_shapes()
      .expect_error(ErrorCode::kInvalidArgument, "2 axes")
      .check();
}

}  // namespace
}  // namespace recur::test
