// RMSNormalization (opset 23): axis, epsilon, scale broadcast, mixed X/scale dtypes and errors.
// Expected values are numpy float64: x / np.sqrt((x * x).mean(axes, keepdims=True) + eps) * s.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(RMSNormalization, LastAxisByDefault) {
  // x = [[1, 2, 3], [4, 5, 6]], s = [1, 0.5, 2], eps = 0
  OpTester("RMSNormalization", 23)
      .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .input(tensor<float>({3}, {1, 0.5f, 2}))
      .attr("epsilon", 0.0f)
      .expect<float>({2, 3},
                     {0.4629100498862757f, 0.4629100498862757f, 2.7774602993176543f,
                      0.7895420339517227f, 0.4934637712198267f, 2.368626101855168f},
                     1e-6)
      .check();
}

TEST(RMSNormalization, AxisZeroWithEpsilon) {
  // x = [[1, -2], [3, 4]], s = [[1, 2], [3, 4]], axis 0: the mean over all four, eps = 1
  OpTester("RMSNormalization", 23)
      .input(tensor<double>({2, 2}, {1, -2, 3, 4}))
      .input(tensor<double>({2, 2}, {1, 2, 3, 4}))
      .attr("axis", int64_t{0})
      .attr("epsilon", 1.0f)
      .expect<double>(
          {2, 2}, {0.34299717028501764, -1.3719886811400706, 3.0869745325651587, 5.487954724560282},
          1e-12)
      .check();
}

TEST(RMSNormalization, ScaleBroadcastsOverTheNormalisedShape) {
  // x = np.arange(1, 9).reshape(2, 2, 2), axis 1 (mean over the last two), s = [[2, -1]],
  // default eps 1e-5
  OpTester("RMSNormalization", 23)
      .input(tensor<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))
      .input(tensor<float>({1, 2}, {2, -1}))
      .attr("axis", int64_t{1})
      .expect<float>(
          {2, 2, 2},
          {0.7302962564762128f, -0.7302962564762128f, 2.1908887694286383f, -1.4605925129524255f,
           1.5161959128824245f, -0.9097175477294547f, 2.122674278035394f, -1.2129567303059394f},
          1e-5)
      .check();
}

TEST(RMSNormalization, OutputTakesScaleDtype) {
  // float16 X, float32 scale: Y is float32. x = [3, 4]: rms = sqrt(12.5) (eps 0).
  Outputs y = OpTester("RMSNormalization", 23)
                  .input(tensor<Float16>({2}, {Float16(3.0f), Float16(4.0f)}))
                  .input(tensor<float>({2}, {1, 1}))
                  .attr("epsilon", 0.0f)
                  .run();
  expect_tensor<float>(y[0], {2}, {0.848528137423857f, 1.131370849898476f}, 1e-6);
}

TEST(RMSNormalization, ShapeRuleGivesScaleDtypeAndXShape) {
  const Session s = OpTester("RMSNormalization", 23)
                        .input(tensor<double>({2, 3}, {1, 2, 3, 4, 5, 6}))
                        .input(tensor<float>({3}, {1, 1, 1}))
                        .session();
  EXPECT_EQ(s.outputs()[0].dtype, DType::kFloat32);
  EXPECT_EQ(s.outputs()[0].shape_string(), "[2,3]");
}

TEST(RMSNormalization, Errors) {
  expect_error(OpTester("RMSNormalization", 23)
                   .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(tensor<float>({3}, {1, 1, 1}))
                   .attr("axis", int64_t{2}),
               ErrorCode::kOutOfRange, "axis 2 is out of range for rank 2");
  expect_error(OpTester("RMSNormalization", 23)
                   .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(tensor<float>({2}, {1, 1}))
                   .dynamic_shapes(),
               ErrorCode::kInvalidArgument, "scale [2] must broadcast to X [2,3]");
  expect_error(OpTester("RMSNormalization", 23)
                   .input(tensor<int32_t>({2}, {1, 2}))
                   .input(tensor<float>({2}, {1, 1})),
               ErrorCode::kInvalidArgument,
               "X (int32) and scale (float32) must be float32, float64, float16 or bfloat16");
  expect_error(OpTester("RMSNormalization", 23)
                   .input(tensor<float>({2}, {1, 2}))
                   .input(tensor<float>({2}, {1, 1}))
                   .attr("stash_type", int64_t{7}),
               ErrorCode::kInvalidModel, "stash_type 7 is not a floating-point type");
}

}  // namespace
}  // namespace recur::test
