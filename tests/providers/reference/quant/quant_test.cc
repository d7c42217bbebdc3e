// Quantisation kernels: rounding, saturation and bad parameters.
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(ReferenceQuantizeLinear, RoundsHalfToEvenAndSaturates) {
  // numpy: np.clip(np.rint([-1000, 1000, 2.5, 3.5, -0.5]) + 0, 0, 255) = [0, 255, 2, 4, 0].
  Outputs y = run_op("QuantizeLinear", 13,
                     {{"x", floats({5}, {-1000, 1000, 2.5f, 3.5f, -0.5f})},
                      {"s", floats({}, {1})},
                      {"z", Tensor::scalar<uint8_t>(0)}},
                     {}, {DType::kUInt8});
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{0, 255, 2, 4, 0}));
}

TEST(ReferenceQuantizeLinear, PerAxisScaleOfWrongLength) {
  expect_error(
      [] {
        run_op("QuantizeLinear", 13,
               {{"x", floats({2, 3}, {0, 0, 0, 0, 0, 0})}, {"s", floats({2}, {1, 1})}}, {},
               {DType::kUInt8});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (QuantizeLinear)", "axis 1", "has 3"});
  expect_error(
      [] {
        run_op("QuantizeLinear", 10, {{"x", floats({2}, {0, 0})}, {"s", floats({2}, {1, 1})}}, {},
               {DType::kUInt8});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (QuantizeLinear)", "scalar before opset 13"});
}

TEST(ReferenceDequantizeLinear, Int32NeedsZeroZeroPoint) {
  expect_error(
      [] {
        run_op("DequantizeLinear", 13,
               {{"x", Tensor::from_vector<int32_t>({2}, {1, 2})},
                {"s", floats({}, {1})},
                {"z", Tensor::scalar<int32_t>(3)}},
               {}, {DType::kFloat32});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (DequantizeLinear)", "must be 0"});
}

TEST(ReferenceDynamicQuantizeLinear, AllZerosGiveZeroScale) {
  // The range [0, 0] has scale 0; every value (0) quantises to the zero point 0.
  Outputs y = run_op("DynamicQuantizeLinear", 11, {{"x", floats({3}, {0, 0, 0})}}, {},
                     {DType::kUInt8, DType::kFloat32, DType::kUInt8});
  EXPECT_EQ(values<uint8_t>(y[0]), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(values<float>(y[1]), (std::vector<float>{0}));
  EXPECT_EQ(values<uint8_t>(y[2]), (std::vector<uint8_t>{0}));
}

TEST(ReferenceMatMulInteger, WrongTypesAndZeroPoints) {
  expect_error(
      [] {
        run_op("MatMulInteger", 10,
               {{"a", floats({1, 1}, {1})}, {"b", Tensor::from_vector<uint8_t>({1, 1}, {1})}}, {},
               {DType::kInt32});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MatMulInteger)", "uint8 or int8"});
  expect_error(
      [] {
        run_op("MatMulInteger", 10,
               {{"a", Tensor::from_vector<uint8_t>({2, 1}, {1, 2})},
                {"b", Tensor::from_vector<uint8_t>({1, 1}, {1})},
                {"az", Tensor::from_vector<uint8_t>({3}, {1, 2, 3})}},
               {}, {DType::kInt32});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MatMulInteger)", "one value per row"});
}

TEST(ReferenceConvInteger, WeightZeroPointPerChannelLength) {
  expect_error(
      [] {
        run_op("ConvInteger", 10,
               {{"x", Tensor::from_vector<uint8_t>({1, 1, 2}, {1, 2})},
                {"w", Tensor::from_vector<uint8_t>({2, 1, 1}, {1, 2})},
                {"", Tensor()},
                {"wz", Tensor::from_vector<uint8_t>({3}, {0, 0, 0})}},
               {}, {DType::kInt32});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (ConvInteger)", "per output channel"});
}

// Empty outputs (a batch of 0, an empty inner dimension): no copy from an empty accumulator,
// whose data() may be null (a fuzzer find under UBSan:
// tests/fuzz_regressions/model/conv_integer_empty_output.onnx).
TEST(ReferenceIntegerOps, EmptyOutputs) {
  Outputs c = run_op("ConvInteger", 10,
                     {{"x", Tensor::from_vector<uint8_t>({0, 1, 3}, {})},
                      {"w", Tensor::from_vector<uint8_t>({2, 1, 1}, {1, 2})}},
                     {}, {DType::kInt32});
  EXPECT_EQ(c[0].shape(), (Shape{0, 2, 3}));
  Outputs m = run_op("MatMulInteger", 10,
                     {{"a", Tensor::from_vector<uint8_t>({0, 4}, {})},
                      {"b", Tensor::from_vector<uint8_t>({4, 3}, std::vector<uint8_t>(12, 1))}},
                     {}, {DType::kInt32});
  EXPECT_EQ(m[0].shape(), (Shape{0, 3}));
}

TEST(ReferenceQLinearMatMul, ScalesMustBeScalarsOrPerRow) {
  auto u8 = [](std::vector<uint8_t> v) {
    return Tensor::from_vector<uint8_t>({static_cast<int64_t>(v.size())}, v);
  };
  expect_error(
      [&] {
        run_op("QLinearMatMul", 10,
               {{"a", Tensor::from_vector<uint8_t>({1, 2}, {1, 2})},
                {"as", floats({}, {1})},
                {"az", Tensor::scalar<uint8_t>(0)},
                {"b", Tensor::from_vector<uint8_t>({2, 1}, {1, 2})},
                {"bs", floats({}, {1})},
                {"bz", Tensor::scalar<uint8_t>(0)},
                {"ys", floats({2}, {1, 1})},
                {"yz", u8({0})}},
               {}, {DType::kUInt8});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (QLinearMatMul)", "y_scale"});
}

TEST(ReferenceQuantizeLinear, BlockedToInt4) {
  // x [2, 3], blocks of 2 along axis 1: scales [2, 2]; element (r, c) uses scale (r, c / 2).
  // np.clip(np.rint([4/2, 5/2, 6/1, -3/1, 20/1, -40/4]), -8, 7) = [2, 2, 6, -3, 7, -8]
  OpTester("QuantizeLinear", 21)
      .input(tensor<float>({2, 3}, {4, 5, 6, -3, 20, -40}))
      .input(tensor<float>({2, 2}, {2, 1, 1, 4}))
      .input(tensor<Int4>({2, 2}, {Int4{0}, Int4{0}, Int4{0}, Int4{0}}))
      .attr("axis", int64_t{1})
      .attr("block_size", int64_t{2})
      .expect<Int4>({2, 3}, {Int4{2}, Int4{2}, Int4{6}, Int4{-3}, Int4{7}, Int4{-8}})
      .check();
}

TEST(ReferenceQuantizeLinear, OutputDtypeUInt16) {
  // rint(70000 / 1) saturates at 65535; rint(2.5) + 10 = 12.
  OpTester("QuantizeLinear", 21)
      .input(tensor<float>({2}, {70000, 2.5f}))
      .input(tensor<float>({}, {1}))
      .input(tensor<uint16_t>({}, {10}))
      .expect<uint16_t>({2}, {65535, 12})
      .check();
}

TEST(ReferenceDequantizeLinear, Float8WithFloat16Scale) {
  // E4M3FN 0x38 = 1, 0xC0 = -2; times the scale 0.5 in float16.
  OpTester("DequantizeLinear", 19)
      .input(
          tensor<Float8E4M3FN>({2}, {Float8E4M3FN::from_bits(0x38), Float8E4M3FN::from_bits(0xC0)}))
      .input(tensor<Float16>({}, {Float16(0.5f)}))
      .expect<Float16>({2}, {Float16(0.5f), Float16(-1.0f)})
      .check();
}

}  // namespace
TEST(ReferenceQuantizeLinear, ToFloat4E2M1Saturates) {
  // x / 0.5 = [2, 5.8, -14, 0.4] -> float4e2m1 2, 6, -6 (saturated), 0.5.
  OpTester("QuantizeLinear", 23)
      .input(tensor<float>({4}, {1, 2.9f, -7, 0.2f}))
      .input(tensor<float>({}, {0.5f}))
      .input(tensor<Float4E2M1>({}, {Float4E2M1::from_bits(0)}))
      .expect<Float4E2M1>({4}, {Float4E2M1::from_bits(0x4), Float4E2M1::from_bits(0x7),
                                Float4E2M1::from_bits(0xF), Float4E2M1::from_bits(0x1)})
      .check();
}

TEST(ReferenceQuantizeLinear, ToInt2AndUInt2Saturates) {
  // rint([-3, -1, 0.6, 5]) clamped to [-2, 1]; rint([-3, 0.4, 1.5, 9]) + 1 clamped to [0, 3].
  OpTester("QuantizeLinear", 25)
      .input(tensor<float>({4}, {-3, -1, 0.6f, 5}))
      .input(tensor<float>({}, {1}))
      .input(tensor<Int2>({}, {Int2{0}}))
      .expect<Int2>({4}, {Int2{-2}, Int2{-1}, Int2{1}, Int2{1}})
      .check();
  OpTester("QuantizeLinear", 25)
      .input(tensor<float>({4}, {-3, 0.4f, 1.5f, 9}))
      .input(tensor<float>({}, {1}))
      .input(tensor<UInt2>({}, {UInt2{1}}))
      .expect<UInt2>({4}, {UInt2{0}, UInt2{1}, UInt2{3}, UInt2{3}})
      .check();
}

TEST(ReferenceQuantizeLinear, PrecisionRoundsTheQuotient) {
  // 2.5 + 2^-10 is a tie in float16 (spacing 2^-9 in [2, 4)) that goes to 2.5, which rint
  // takes to 2; in float32 it stays above 2.5 and becomes 3.
  const float x = 2.5f + 0x1p-10f;
  OpTester("QuantizeLinear", 23)
      .input(tensor<float>({1}, {x}))
      .input(tensor<float>({}, {1}))
      .input(tensor<int8_t>({}, {0}))
      .expect<int8_t>({1}, {3})
      .check();
  OpTester("QuantizeLinear", 23)
      .input(tensor<float>({1}, {x}))
      .input(tensor<float>({}, {1}))
      .input(tensor<int8_t>({}, {0}))
      .attr("precision", static_cast<int64_t>(DType::kFloat16))
      .expect<int8_t>({1}, {2})
      .check();
}

TEST(ReferenceQuantizeLinear, Float8E8M0Scale) {
  // Scale 0x80 = 2: [4, -6] / 2 = [2, -3].
  OpTester("QuantizeLinear", 24)
      .input(tensor<float>({2}, {4, -6}))
      .input(tensor<Float8E8M0>({}, {Float8E8M0::from_bits(0x80)}))
      .input(tensor<int8_t>({}, {0}))
      .expect<int8_t>({2}, {2, -3})
      .check();
}

TEST(ReferenceDequantizeLinear, OutputDtypeAndNewInputTypes) {
  // (x - zp) * scale: int8 [2, -3] * 0.5 as float16; int2 [-2, 1] - (-1) times 1.5;
  // float4e2m1 [6, -1.5] times 2; int8 3 times the float8e8m0 scale 0x7E = 0.5.
  OpTester("DequantizeLinear", 23)
      .input(tensor<int8_t>({2}, {2, -3}))
      .input(tensor<float>({}, {0.5f}))
      .attr("output_dtype", static_cast<int64_t>(DType::kFloat16))
      .expect<Float16>({2}, {Float16(1.0f), Float16(-1.5f)})
      .check();
  OpTester("DequantizeLinear", 25)
      .input(tensor<Int2>({2}, {Int2{-2}, Int2{1}}))
      .input(tensor<float>({}, {1.5f}))
      .input(tensor<Int2>({}, {Int2{-1}}))
      .expect<float>({2}, {-1.5f, 3})
      .check();
  OpTester("DequantizeLinear", 23)
      .input(tensor<Float4E2M1>({2}, {Float4E2M1::from_bits(0x7), Float4E2M1::from_bits(0xB)}))
      .input(tensor<float>({}, {2}))
      .expect<float>({2}, {12, -3})
      .check();
  OpTester("DequantizeLinear", 24)
      .input(tensor<int8_t>({1}, {3}))
      .input(tensor<Float8E8M0>({}, {Float8E8M0::from_bits(0x7E)}))
      .attr("output_dtype", static_cast<int64_t>(DType::kFloat32))
      .expect<float>({1}, {1.5f})
      .check();
}

}  // namespace recur::test
