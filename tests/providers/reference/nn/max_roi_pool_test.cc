// MaxRoiPool: Caffe's ROIPooling bins. The 4x4 image holds 0..15 row-major.
#include <numeric>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor image() {
  std::vector<float> v(16);
  std::iota(v.begin(), v.end(), 0.0f);
  return tensor<float>({1, 1, 4, 4}, v);
}

TEST(MaxRoiPool, WholeImageInto2x2Bins) {
  // Region (0, 0)-(3, 3) is 4x4; bins of 2x2 hold maxima 5, 7, 13, 15.
  OpTester("MaxRoiPool", 22)
      .input(image())
      .input(tensor<float>({1, 5}, {0, 0, 0, 3, 3}))
      .attr("pooled_shape", std::vector<int64_t>{2, 2})
      .expect<float>({1, 1, 2, 2}, {5, 7, 13, 15})
      .check();
}

TEST(MaxRoiPool, SpatialScaleAndOnePixelRegion) {
  // Corners (2, 2)-(2, 2) after scale 0.5 and rounding: one pixel, x = 2, y = 2 -> 10; its
  // 1x2 bins of 0.5 pixel: floor/ceil give the same pixel in both.
  OpTester("MaxRoiPool", 1)
      .input(image())
      .input(tensor<float>({1, 5}, {0, 4, 4, 4, 4}))
      .attr("pooled_shape", std::vector<int64_t>{1, 2})
      .attr("spatial_scale", 0.5f)
      .expect<float>({1, 1, 1, 2}, {10, 10})
      .check();
}

TEST(MaxRoiPool, BatchIndexOutOfRange) {
  OpTester("MaxRoiPool", 22)
      .input(image())
      .input(tensor<float>({1, 5}, {1, 0, 0, 3, 3}))
      .attr("pooled_shape", std::vector<int64_t>{2, 2})
      .expect_error(ErrorCode::kOutOfRange, "batch index")
      .check();
}

}  // namespace
}  // namespace recur::test
