// Resize and Upsample: corrupt scales and sizes are rejected before anything is allocated.
#include <gtest/gtest.h>

#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor x4() { return floats({1, 1, 2, 2}, {1, 2, 3, 4}); }
Tensor none() { return Tensor(); }

TEST(ReferenceResize, HugeScaleIsRejected) {
  expect_error(
      [] {
        run_op("Resize", 13, {{"x", x4()}, {"", none()}, {"s", floats({4}, {1, 1, 1e9f, 1e9f})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Resize)", "too large"});
  expect_error(
      [] {
        run_op("Resize", 13, {{"x", x4()}, {"", none()}, {"s", floats({4}, {1, 1, 1e30f, 1})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Resize)", "huge"});
}

// An empty output needs no taps. Before, the taps of every output index of each axis were built
// first: scales [0.5, 1, 2^27, 1] (an empty output, with an axis of 268M) made 6 GB of them.
TEST(ReferenceResize, EmptyOutputBuildsNoTaps) {
  const auto out = run_op(
      "Resize", 13, {{"x", x4()}, {"", none()}, {"s", floats({4}, {0.5f, 1, 134217728.0f, 1})}});
  EXPECT_EQ(out[0].shape(), (Shape{0, 1, 268435456, 2}));
}

TEST(ReferenceResize, NonPositiveOrNanScale) {
  for (float bad : {0.0f, -2.0f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    expect_error(
        [bad] {
          run_op("Resize", 13, {{"x", x4()}, {"", none()}, {"s", floats({4}, {1, 1, bad, 1})}});
        },
        ErrorCode::kInvalidArgument, {"node 'node' (Resize)", "must be positive"});
  }
}

TEST(ReferenceResize, HugeSizesAndWrongLengths) {
  expect_error(
      [] {
        run_op("Resize", 13,
               {{"x", x4()},
                {"", none()},
                {"", none()},
                {"sz", Tensor::from_vector<int64_t>({4}, {1, 1, int64_t{1} << 40, 1 << 20})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Resize)", "too large"});
  expect_error(
      [] {
        run_op("Resize", 13, {{"x", x4()}, {"", none()}, {"s", floats({2}, {2, 2})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Resize)", "rank 4"});
  expect_error(
      [] {
        run_op("Resize", 13, {{"x", x4()}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Resize)", "exactly one of scales and sizes"});
}

TEST(ReferenceResize, UnknownModesAreModelErrors) {
  expect_error(
      [] {
        run_op("Resize", 13, {{"x", x4()}, {"", none()}, {"s", floats({4}, {1, 1, 2, 2})}},
               [](onnx::NodeProto& n) { set_attr(n, "mode", std::string("area")); });
      },
      ErrorCode::kInvalidModel, {"node 'node' (Resize)", "area"});
}

TEST(ReferenceResize, TfCropAndResizeExtrapolates) {
  // roi [0.5, 1.5] along W maps output x = 0, 1 to source 0.5 and 1.5: 1.5 is outside the
  // 2-wide input (last index 1), so it takes extrapolation_value.
  Outputs y =
      run_op("Resize", 13,
             {{"x", x4()},
              {"roi", floats({8}, {0, 0, 0, 0.5f, 1, 1, 1, 1.5f})},
              {"", none()},
              {"sz", Tensor::from_vector<int64_t>({4}, {1, 1, 1, 2})}},
             [](onnx::NodeProto& n) {
               set_attr(n, "mode", std::string("linear"));
               set_attr(n, "coordinate_transformation_mode", std::string("tf_crop_and_resize"));
               set_attr(n, "extrapolation_value", -7.0f);
             });
  // Row: tf_crop_and_resize with one output row samples the roi centre 0.5 * (0 + 1) * 1.
  // Value at (0.5, 0.5) = mean of the four = 2.5.
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{2.5f, -7.0f}));
}

TEST(ReferenceUpsample, ScalesBelowOneAreAllowedButCorruptOnesAreNot) {
  expect_error(
      [] {
        run_op("Upsample", 9, {{"x", x4()}, {"s", floats({4}, {1, 1, 1e12f, 1e12f})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Upsample)"});
  expect_error(
      [] {
        run_op("Upsample", 7, {{"x", x4()}});
      },
      ErrorCode::kInvalidModel, {"node 'node' (Upsample)", "scales"});
}

}  // namespace

// Resize-18 and 19: expected values worked by hand from the operator's definition.
TEST(ReferenceResize, AxesNameOnlyTheResizedAxes) {
  OpTester("Resize", 18)
      .input(floats({1, 1, 2, 2}, {1, 2, 3, 4}))
      .omitted()
      .constant(floats({1}, {2}))
      .attr("axes", std::vector<int64_t>{3})
      .attr("mode", std::string("nearest"))
      .attr("coordinate_transformation_mode", std::string("asymmetric"))
      .expect<float>({1, 1, 2, 4}, {1, 1, 2, 2, 3, 3, 4, 4})
      .check();
}

TEST(ReferenceResize, KeepAspectRatioUsesOneScale) {
  // sizes ask for scales 2 and 1: not_larger takes 1, not_smaller 2, on both axes.
  auto run = [](const char* policy) {
    return OpTester("Resize", 18)
        .input(floats({1, 1, 2, 2}, {1, 2, 3, 4}))
        .omitted()
        .omitted()
        .constant(tensor<int64_t>({2}, {4, 2}))
        .attr("axes", std::vector<int64_t>{2, 3})
        .attr("keep_aspect_ratio_policy", std::string(policy))
        .attr("mode", std::string("nearest"))
        .attr("coordinate_transformation_mode", std::string("asymmetric"));
  };
  run("not_larger").expect<float>({1, 1, 2, 2}, {1, 2, 3, 4}).check();
  run("not_smaller")
      .expect<float>({1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4})
      .check();
}

TEST(ReferenceResize, AntialiasWidensTheLinearFilter) {
  // Scale 0.5: the tent filter spans two input pixels each side; at x = 0.5 its weights on
  // inputs -1..2 are 1/8, 3/8, 3/8, 1/8 (index -1 edge-padded to 0).
  auto run = [](int64_t antialias) {
    return OpTester("Resize", 18)
        .input(floats({1, 1, 1, 4}, {1, 2, 3, 4}))
        .omitted()
        .constant(floats({4}, {1, 1, 1, 0.5f}))
        .attr("antialias", antialias)
        .attr("mode", std::string("linear"));
  };
  run(1).expect<float>({1, 1, 1, 2}, {1.625f, 3.375f}).check();
  run(0).expect<float>({1, 1, 1, 2}, {1.5f, 3.5f}).check();
}

TEST(ReferenceResize, HalfPixelSymmetricCentresTheOutput) {
  // Scale 0.6 gives 2 of 2.4 outputs; the sampled points move to stay symmetric about the
  // centre: 2/3 and 7/3, so the values 5/3 and 10/3.
  OpTester("Resize", 19)
      .input(floats({1, 1, 1, 4}, {1, 2, 3, 4}))
      .omitted()
      .constant(floats({4}, {1, 1, 1, 0.6f}))
      .attr("mode", std::string("linear"))
      .attr("coordinate_transformation_mode", std::string("half_pixel_symmetric"))
      .expect<float>({1, 1, 1, 2}, {5.0f / 3, 10.0f / 3}, 1e-5)
      .check();
  OpTester("Resize", 18)
      .input(floats({1, 1, 1, 4}, {1, 2, 3, 4}))
      .omitted()
      .constant(floats({4}, {1, 1, 1, 0.6f}))
      .attr("coordinate_transformation_mode", std::string("half_pixel_symmetric"))
      .expect_error(ErrorCode::kInvalidModel, "half_pixel_symmetric")
      .check();
}

}  // namespace recur::test
