// Pooling: values the backend suite does not check, and clear errors for bad attributes.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(ReferencePool, MaxPoolIndicesStorageOrder) {
  // 2x3 plane [[1, 5, 2], [4, 3, 6]], 2x2 windows: maxima 5 at (0,1) and 6 at (1,2).
  // Row-major indices 1 and 5; column-major (index = row + col * 2) 2 and 5.
  Tensor x = floats({1, 1, 2, 3}, {1, 5, 2, 4, 3, 6});
  for (int64_t order : {0, 1}) {
    Outputs y = run_op("MaxPool", 12, {{"x", x}},
                       [order](onnx::NodeProto& n) {
                         set_attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
                         set_attr(n, "storage_order", order);
                       },
                       {DType::kFloat32, DType::kInt64});
    EXPECT_EQ(values<float>(y[0]), (std::vector<float>{5, 6}));
    EXPECT_EQ(values<int64_t>(y[1]),
              order == 0 ? (std::vector<int64_t>{1, 5}) : (std::vector<int64_t>{2, 5}));
  }
}

TEST(ReferencePool, AveragePoolPadsCountedOrNot) {
  // One 3-wide window over [pad, 2, 4]: 6/2 without the pad, 6/3 with it.
  Tensor x = floats({1, 1, 2}, {2, 4});
  for (int64_t include : {0, 1}) {
    Outputs y = run_op("AveragePool", 11, {{"x", x}}, [include](onnx::NodeProto& n) {
      set_attr(n, "kernel_shape", std::vector<int64_t>{3});
      set_attr(n, "pads", std::vector<int64_t>{1, 0});
      set_attr(n, "count_include_pad", include);
    });
    EXPECT_EQ(values<float>(y[0]), (std::vector<float>{include ? 2.0f : 3.0f}));
  }
}

TEST(ReferencePool, KernelLargerThanInput) {
  expect_error(
      [] {
        run_op("MaxPool", 12, {{"x", floats({1, 1, 2}, {1, 2})}},
               [](onnx::NodeProto& n) { set_attr(n, "kernel_shape", std::vector<int64_t>{3}); });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MaxPool)", "larger than the padded input"});
}

TEST(ReferencePool, MissingKernelShapeAndZeroStride) {
  expect_error(
      [] {
        run_op("AveragePool", 11, {{"x", floats({1, 1, 2}, {1, 2})}});
      },
      ErrorCode::kInvalidModel, {"node 'node' (AveragePool)", "kernel_shape"});
  expect_error(
      [] {
        run_op("MaxPool", 12, {{"x", floats({1, 1, 2}, {1, 2})}}, [](onnx::NodeProto& n) {
          set_attr(n, "kernel_shape", std::vector<int64_t>{1});
          set_attr(n, "strides", std::vector<int64_t>{0});
        });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MaxPool)", "strides"});
}

TEST(ReferencePool, KernelRankMismatch) {
  expect_error(
      [] {
        run_op("MaxPool", 12, {{"x", floats({1, 1, 2, 2}, {1, 2, 3, 4})}},
               [](onnx::NodeProto& n) { set_attr(n, "kernel_shape", std::vector<int64_t>{2}); });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MaxPool)", "spatial dimensions"});
}

TEST(ReferencePool, MaxUnpoolIndexOutOfRange) {
  expect_error(
      [] {
        run_op("MaxUnpool", 11,
               {{"x", floats({1, 1, 1, 1}, {7})},
                {"i", Tensor::from_vector<int64_t>({1, 1, 1, 1}, {4})}},
               [](onnx::NodeProto& n) {
                 set_attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
               });
      },
      ErrorCode::kOutOfRange, {"node 'node' (MaxUnpool)", "index 4"});
}

TEST(ReferencePool, GlobalMaxPoolOfEmptySpatial) {
  expect_error(
      [] {
        run_op("GlobalMaxPool", 1, {{"x", Tensor::zeros(DType::kFloat32, {1, 2, 0})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (GlobalMaxPool)", "empty"});
}

TEST(ReferencePool, AveragePoolCeilModeStopsAtThePaddedEnd) {
  // [1, 2, 3, 4], kernel 3, stride 2, ceil_mode, no pads: the second window is [3, 4, past the
  // end]. With or without count_include_pad it divides by the 2 elements up to the padded end
  // (avg_pool1d(ceil_mode=True) in PyTorch, and ONNX Runtime: (3 + 4) / 2).
  Tensor x = floats({1, 1, 4}, {1, 2, 3, 4});
  for (int64_t include : {0, 1}) {
    Outputs y = run_op("AveragePool", 19, {{"x", x}}, [include](onnx::NodeProto& n) {
      set_attr(n, "kernel_shape", std::vector<int64_t>{3});
      set_attr(n, "strides", std::vector<int64_t>{2});
      set_attr(n, "ceil_mode", int64_t{1});
      set_attr(n, "count_include_pad", include);
    });
    EXPECT_EQ(values<float>(y[0]), (std::vector<float>{2.0f, 3.5f}));
  }
}

TEST(ReferencePool, AveragePoolDilations) {
  // Kernel 2 dilated by 2 over [1, 2, 3, 4]: windows {1, 3} and {2, 4}.
  Outputs y =
      run_op("AveragePool", 19, {{"x", floats({1, 1, 4}, {1, 2, 3, 4})}}, [](onnx::NodeProto& n) {
        set_attr(n, "kernel_shape", std::vector<int64_t>{2});
        set_attr(n, "dilations", std::vector<int64_t>{2});
      });
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{2.0f, 3.0f}));
}

}  // namespace
}  // namespace recur::test
