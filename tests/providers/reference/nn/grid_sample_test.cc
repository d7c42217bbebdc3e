// GridSample-20: N-D sampling and the renamed modes; values worked by hand.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor cube() { return floats({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}); }

TEST(ReferenceGridSample, VolumetricLinearAtTheCentreIsTheMean) {
  OpTester("GridSample", 20)
      .input(cube())
      .input(floats({1, 1, 1, 1, 3}, {0, 0, 0}))
      .expect<float>({1, 1, 1, 1, 1}, {3.5f})
      .check();
}

TEST(ReferenceGridSample, VolumetricNearestReadsXYZInnermostFirst) {
  // (x, y, z) = (1, -1, 1) with align_corners: w = 1, h = 0, d = 1, element 4 + 1.
  OpTester("GridSample", 20)
      .input(cube())
      .input(floats({1, 1, 1, 1, 3}, {1, -1, 1}))
      .attr("mode", std::string("nearest"))
      .attr("align_corners", int64_t{1})
      .expect<float>({1, 1, 1, 1, 1}, {5})
      .check();
}

TEST(ReferenceGridSample, ModeNamesFollowTheOpset) {
  OpTester("GridSample", 20)
      .input(floats({1, 1, 2, 2}, {1, 2, 3, 4}))
      .input(floats({1, 1, 1, 2}, {0, 0}))
      .attr("mode", std::string("bilinear"))
      .expect_error(ErrorCode::kInvalidModel, "bilinear")
      .check();
  OpTester("GridSample", 16)
      .input(floats({1, 1, 2, 2}, {1, 2, 3, 4}))
      .input(floats({1, 1, 1, 2}, {0, 0}))
      .attr("mode", std::string("linear"))
      .expect_error(ErrorCode::kInvalidModel, "linear")
      .check();
}

}  // namespace
}  // namespace recur::test
