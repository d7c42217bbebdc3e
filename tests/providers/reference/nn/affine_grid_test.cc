// AffineGrid-20: grids worked by hand from theta and the normalised pixel coordinates.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(ReferenceAffineGrid, IdentityGivesThePixelCentres) {
  OpTester("AffineGrid", 20)
      .input(floats({1, 2, 3}, {1, 0, 0, 0, 1, 0}))
      .constant(tensor<int64_t>({4}, {1, 1, 2, 2}))
      .expect<float>({1, 2, 2, 2}, {-0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f})
      .check();
}

TEST(ReferenceAffineGrid, AlignCornersAndATranslation) {
  // H = 1 puts y at -1; x is -1 and 1; theta maps (x, y) to (x + 0.25, 2y).
  OpTester("AffineGrid", 20)
      .input(floats({1, 2, 3}, {1, 0, 0.25f, 0, 2, 0}))
      .constant(tensor<int64_t>({4}, {1, 1, 1, 2}))
      .attr("align_corners", int64_t{1})
      .expect<float>({1, 1, 2, 2}, {-0.75f, -2, 1.25f, -2})
      .check();
}

TEST(ReferenceAffineGrid, ThetaMustMatchSize) {
  OpTester("AffineGrid", 20)
      .input(floats({1, 2, 3}, {1, 0, 0, 0, 1, 0}))
      .constant(tensor<int64_t>({5}, {1, 1, 2, 2, 2}))
      .expect_error(ErrorCode::kInvalidArgument, "theta")
      .check();
}

}  // namespace
}  // namespace recur::test
