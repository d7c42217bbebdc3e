// GridSample, RoiAlign and NonMaxSuppression: bad inputs and small hand-worked cases.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(ReferenceRoiAlign, BatchIndexOutOfRange) {
  expect_error(
      [] {
        run_op("RoiAlign", 16,
               {{"x", Tensor::zeros(DType::kFloat32, {1, 1, 4, 4})},
                {"rois", floats({1, 4}, {0, 0, 2, 2})},
                {"i", Tensor::from_vector<int64_t>({1}, {1})}});
      },
      ErrorCode::kOutOfRange, {"node 'node' (RoiAlign)", "batch index 1"});
}

TEST(ReferenceRoiAlign, NonFiniteOrHugeRoi) {
  for (float bad : {NAN, 1e30f}) {
    expect_error(
        [bad] {
          run_op("RoiAlign", 16,
                 {{"x", Tensor::zeros(DType::kFloat32, {1, 1, 4, 4})},
                  {"rois", floats({1, 4}, {0, 0, bad, 2})},
                  {"i", Tensor::from_vector<int64_t>({1}, {0})}});
        },
        ErrorCode::kInvalidArgument, {"node 'node' (RoiAlign)", "roi 0"});
  }
}

TEST(ReferenceGridSample, FarOutsideOrNanPositionsReadZero) {
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    Outputs y = run_op("GridSample", 16,
                       {{"x", floats({1, 1, 2, 2}, {1, 2, 3, 4})},
                        {"g", floats({1, 1, 2, 2}, {1e30f, -1e30f, NAN, 0})}},
                       [mode](onnx::NodeProto& n) { set_attr(n, "mode", std::string(mode)); });
    EXPECT_EQ(values<float>(y[0]), (std::vector<float>{0, 0})) << mode;
  }
}

TEST(ReferenceGridSample, ShapeMismatch) {
  expect_error(
      [] {
        run_op("GridSample", 16,
               {{"x", Tensor::zeros(DType::kFloat32, {1, 1, 2, 2})},
                {"g", Tensor::zeros(DType::kFloat32, {1, 2, 2, 3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (GridSample)", "grid"});
}

TEST(ReferenceGridSample, CornersWithAlignCorners) {
  // align_corners=1 maps -1 and 1 to the first and last pixel centres exactly.
  Outputs y = run_op(
      "GridSample", 16,
      {{"x", floats({1, 1, 2, 2}, {1, 2, 3, 4})}, {"g", floats({1, 1, 2, 2}, {-1, -1, 1, 1})}},
      [](onnx::NodeProto& n) { set_attr(n, "align_corners", int64_t{1}); });
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{1, 4}));
}

TEST(ReferenceNonMaxSuppression, OverlapSuppressedAndLimit) {
  // Boxes 0 and 1 overlap with IoU 0.81 > 0.5: 1 (lower score) is suppressed; box 2 is apart.
  Tensor boxes = floats({1, 3, 4}, {0, 0, 10, 10, 1, 1, 10, 10, 20, 20, 30, 30});
  Tensor scores = floats({1, 1, 3}, {0.9f, 0.8f, 0.7f});
  Outputs y = run_op("NonMaxSuppression", 11,
                     {{"boxes", boxes},
                      {"scores", scores},
                      {"max", Tensor::from_vector<int64_t>({1}, {10})},
                      {"iou", floats({1}, {0.5f})}},
                     {}, {DType::kInt64});
  EXPECT_EQ(values<int64_t>(y[0]), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  expect_error(
      [&] {
        run_op("NonMaxSuppression", 11, {{"boxes", boxes}, {"scores", floats({1, 1, 2}, {1, 2})}},
               {}, {DType::kInt64});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (NonMaxSuppression)", "scores [B, C, N]"});
}

}  // namespace
}  // namespace recur::test
