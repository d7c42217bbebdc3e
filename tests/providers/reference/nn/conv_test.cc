// Conv and ConvTranspose: bad shapes and attributes give clear errors naming the node.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor zeros(const Shape& s) { return Tensor::zeros(DType::kFloat32, s); }

TEST(ReferenceConv, PointwiseIsAMatrixProduct) {
  // y[m, p] = sum_c w[m, c] * x[c, p] + b[m]; worked by hand.
  Tensor x = floats({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w = floats({2, 2, 1, 1}, {1, -1, 0.5, 2});
  Tensor b = floats({2}, {10, 0});
  Outputs y = run_op("Conv", 11, {{"x", x}, {"w", w}, {"b", b}});
  EXPECT_EQ(y[0].shape(), (Shape{1, 2, 1, 3}));
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{7, 7, 7, 8.5, 11, 13.5}));
}

TEST(ReferenceConv, ChannelsNotDivisibleByGroup) {
  expect_error(
      [] {
        run_op("Conv", 11, {{"x", zeros({1, 3, 5, 5})}, {"w", zeros({2, 1, 3, 3})}},
               [](onnx::NodeProto& n) { testing::set_attr(n, "group", int64_t{2}); });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Conv)", "not divisible by group 2"});
}

TEST(ReferenceConv, WeightChannelsMismatch) {
  expect_error(
      [] {
        run_op("Conv", 11, {{"x", zeros({1, 4, 5, 5})}, {"w", zeros({2, 3, 3, 3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Conv)", "4 channels per group"});
}

TEST(ReferenceConv, KernelLargerThanPaddedInput) {
  expect_error(
      [] {
        run_op("Conv", 11, {{"x", zeros({1, 1, 2, 2})}, {"w", zeros({1, 1, 4, 3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Conv)", "larger than the padded input"});
  // With enough padding the same kernel fits.
  Outputs y = run_op("Conv", 11, {{"x", zeros({1, 1, 2, 2})}, {"w", zeros({1, 1, 4, 3})}},
                     [](onnx::NodeProto& n) {
                       testing::set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 0});
                     });
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 1, 1}));
}

TEST(ReferenceConv, ZeroStrideAndNegativePads) {
  expect_error(
      [] {
        run_op("Conv", 11, {{"x", zeros({1, 1, 4, 4})}, {"w", zeros({1, 1, 2, 2})}},
               [](onnx::NodeProto& n) {
                 testing::set_attr(n, "strides", std::vector<int64_t>{1, 0});
               });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Conv)", "strides"});
  expect_error(
      [] {
        run_op("Conv", 11, {{"x", zeros({1, 1, 4, 4})}, {"w", zeros({1, 1, 2, 2})}},
               [](onnx::NodeProto& n) {
                 testing::set_attr(n, "pads", std::vector<int64_t>{0, -1, 0, 0});
               });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Conv)", "pads"});
}

TEST(ReferenceConv, RankAndBiasChecks) {
  expect_error(
      [] {
        run_op("Conv", 11, {{"x", zeros({4, 4})}, {"w", zeros({1, 1})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Conv)", "rank >= 3"});
  expect_error(
      [] {
        run_op("Conv", 11, {{"x", zeros({1, 1, 4})}, {"w", zeros({2, 1, 2})}, {"b", zeros({3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Conv)", "B [3]"});
}

// The reference's own check of the padded size, before it allocates. oneDNN refuses the same
// nodes with its own errors (an allocation or a 32-bit range), so this runs on the reference.
TEST(ReferenceConv, HugeAttributesAreRejectedBeforeAllocating) {
  auto conv = [](int64_t pad, bool one_pad) {
    return OpTester("Conv", 11)
        .providers({"reference"})
        .input("x", zeros({1, 1, 4, 4}))
        .input("w", zeros({1, 1, 1, 1}))
        .attr("pads", one_pad ? std::vector<int64_t>{0, 0, pad, 0} : std::vector<int64_t>(4, pad));
  };
  expect_error(conv(int64_t{1} << 40, true), ErrorCode::kInvalidArgument, "pads");
  expect_error(conv(int64_t{1} << 30, false), ErrorCode::kInvalidArgument, "too large");
}

TEST(ReferenceConvTranspose, WeightChannelsMismatch) {
  expect_error(
      [] {
        run_op("ConvTranspose", 11, {{"x", zeros({1, 3, 4, 4})}, {"w", zeros({2, 1, 3, 3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (ConvTranspose)", "3 input channels"});
}

TEST(ReferenceConvTranspose, PadsLeavingNoOutput) {
  expect_error(
      [] {
        run_op("ConvTranspose", 11, {{"x", zeros({1, 1, 1})}, {"w", zeros({1, 1, 2})}},
               [](onnx::NodeProto& n) {
                 testing::set_attr(n, "pads", std::vector<int64_t>{1, 1});
               });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (ConvTranspose)", "no output"});
}

TEST(ReferenceConvTranspose, StrideTwoByHand) {
  // x = [1, 2], w = [1, 10, 100], stride 2: y = [1, 10, 102, 20, 200].
  Outputs y =
      run_op("ConvTranspose", 11,
             {{"x", floats({1, 1, 2}, {1, 2})}, {"w", floats({1, 1, 3}, {1, 10, 100})}},
             [](onnx::NodeProto& n) { testing::set_attr(n, "strides", std::vector<int64_t>{2}); });
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{1, 10, 102, 20, 200}));
}

}  // namespace
}  // namespace recur::test
