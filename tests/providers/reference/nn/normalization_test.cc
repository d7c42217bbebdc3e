// Normalisation kernels: parameter shapes and axes are checked.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor zeros(const Shape& s) { return Tensor::zeros(DType::kFloat32, s); }

TEST(ReferenceBatchNorm, ParameterOfWrongSize) {
  expect_error(
      [] {
        run_op("BatchNormalization", 15,
               {{"x", zeros({1, 3, 2})},
                {"s", zeros({3})},
                {"b", zeros({2})},
                {"m", zeros({3})},
                {"v", zeros({3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (BatchNormalization)", "B [2]", "3 values"});
}

TEST(ReferenceBatchNorm, TrainingModeOutputs) {
  // x over N for one channel: [1, 3] -> batch mean 2, variance 1. momentum 0.5:
  // running mean 0.5 * 10 + 0.5 * 2 = 6, running variance 0.5 * 4 + 0.5 * 1 = 2.5.
  // y = (x - 2) / sqrt(1 + 0) = [-1, 1].
  Outputs y = run_op("BatchNormalization", 15,
                     {{"x", floats({2, 1}, {1, 3})},
                      {"s", floats({1}, {1})},
                      {"b", floats({1}, {0})},
                      {"m", floats({1}, {10})},
                      {"v", floats({1}, {4})}},
                     [](onnx::NodeProto& n) {
                       set_attr(n, "training_mode", int64_t{1});
                       set_attr(n, "momentum", 0.5f);
                       set_attr(n, "epsilon", 0.0f);
                     },
                     {DType::kFloat32, DType::kFloat32, DType::kFloat32});
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{-1, 1}));
  EXPECT_EQ(values<float>(y[1]), (std::vector<float>{6}));
  EXPECT_EQ(values<float>(y[2]), (std::vector<float>{2.5f}));
}

TEST(ReferenceLayerNorm, AxisOutOfRangeAndScaleShape) {
  expect_error(
      [] {
        run_op("LayerNormalization", 17, {{"x", zeros({2, 3})}, {"s", zeros({3})}},
               [](onnx::NodeProto& n) { set_attr(n, "axis", int64_t{2}); });
      },
      ErrorCode::kOutOfRange, {"node 'node' (LayerNormalization)", "axis 2"});
  expect_error(
      [] {
        run_op("LayerNormalization", 17, {{"x", zeros({2, 3})}, {"s", zeros({2})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (LayerNormalization)", "Scale [2]"});
}

TEST(ReferenceInstanceNorm, ChannelCount) {
  expect_error(
      [] {
        run_op("InstanceNormalization", 6,
               {{"x", zeros({1, 2, 3})}, {"s", zeros({3})}, {"b", zeros({3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (InstanceNormalization)", "2 values"});
}

TEST(ReferenceLpNormalization, ZeroVectorGivesZeros) {
  Outputs y = run_op("LpNormalization", 1, {{"x", floats({2, 2}, {0, 0, 3, 4})}});
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{0, 0, 0.6f, 0.8f}));
}

TEST(ReferenceLrn, SizeIsRequired) {
  expect_error(
      [] {
        run_op("LRN", 13, {{"x", zeros({1, 2, 2})}});
      },
      ErrorCode::kInvalidModel, {"node 'node' (LRN)", "size"});
}

}  // namespace
}  // namespace recur::test
