// DeformConv-19: values worked by hand.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(ReferenceDeformConv, ZeroOffsetsAreAConvolution) {
  OpTester("DeformConv", 19)
      .input(floats({1, 1, 2, 2}, {1, 2, 3, 4}))
      .input(floats({1, 1, 2, 2}, {1, 1, 1, 1}))
      .input(Tensor::zeros(DType::kFloat32, {1, 8, 1, 1}))
      .input(floats({1}, {0.5f}))
      .expect<float>({1, 1, 1, 1}, {10.5f})
      .check();
}

TEST(ReferenceDeformConv, FractionalOffsetsInterpolateWithZerosOutside) {
  // A 1x1 kernel moved half a pixel right reads (2 + 4) / 2 = 3, then (4 + 0) / 2 = 2; the
  // mask scales the second.
  OpTester("DeformConv", 19)
      .input(floats({1, 1, 1, 2}, {2, 4}))
      .input(floats({1, 1, 1, 1}, {1}))
      .input(floats({1, 2, 1, 2}, {0, 0, 0.5f, 0.5f}))
      .omitted()
      .input(floats({1, 1, 1, 2}, {1, 0.5f}))
      .expect<float>({1, 1, 1, 2}, {3, 1})
      .check();
}

TEST(ReferenceDeformConv, OffsetShapeIsChecked) {
  OpTester("DeformConv", 19)
      .input(floats({1, 1, 1, 2}, {2, 4}))
      .input(floats({1, 1, 1, 1}, {1}))
      .input(floats({1, 1, 1, 2}, {0, 0}))
      .expect_error(ErrorCode::kInvalidArgument, "offset")
      .check();
}

}  // namespace
}  // namespace recur::test
