// BitCast (opset 26): same-width reinterpretation, bool, 4-bit and 2-bit targets, and refusals.
// Expected values are numpy's x.view(dtype).
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

int64_t to(DType t) { return static_cast<int64_t>(t); }

TEST(BitCast, Float32ToInt32) {
  // np.array([1.0, -2.5], np.float32).view(np.int32)
  OpTester("BitCast", 26)
      .input(tensor<float>({2}, {1.0f, -2.5f}))
      .attr("to", to(DType::kInt32))
      .expect<int32_t>({2}, {1065353216, -1071644672})
      .check();
}

TEST(BitCast, Float16ToUInt16KeepsShape) {
  // np.array([[1.0], [-0.5]], np.float16).view(np.uint16)
  OpTester("BitCast", 26)
      .input(tensor<Float16>({2, 1}, {Float16(1.0f), Float16(-0.5f)}))
      .attr("to", to(DType::kUInt16))
      .expect<uint16_t>({2, 1}, {15360, 47104})
      .check();
}

TEST(BitCast, Int64ToFloat64Scalar) {
  // np.array(4611686018427387904, np.int64).view(np.float64) == 2.0
  OpTester("BitCast", 26)
      .input(tensor<int64_t>({}, {4611686018427387904}))
      .attr("to", to(DType::kFloat64))
      .expect<double>({}, {2.0}, 0)
      .check();
}

TEST(BitCast, UInt8ToInt8) {
  OpTester("BitCast", 26)
      .input(tensor<uint8_t>({3}, {255, 128, 1}))
      .attr("to", to(DType::kInt8))
      .expect<int8_t>({3}, {-1, -128, 1})
      .check();
}

TEST(BitCast, UInt8ToBoolIsNonzero) {
  OpTester("BitCast", 26)
      .input(tensor<uint8_t>({3}, {0, 1, 2}))
      .attr("to", to(DType::kBool))
      .expect<bool>({3}, {false, true, true})
      .check();
}

TEST(BitCast, FourBitTypes) {
  // uint4 9 = 0b1001 is int4 -7; int4 -1 = 0b1111 is uint4 15.
  OpTester("BitCast", 26)
      .input(tensor<UInt4>({2}, {UInt4{9}, UInt4{7}}))
      .attr("to", to(DType::kInt4))
      .expect<Int4>({2}, {Int4{-7}, Int4{7}})
      .check();
  OpTester("BitCast", 26)
      .input(tensor<Int4>({2}, {Int4{-1}, Int4{3}}))
      .attr("to", to(DType::kUInt4))
      .expect<UInt4>({2}, {UInt4{15}, UInt4{3}})
      .check();
}

TEST(BitCast, TwoBitAndIrVersion11To13Types) {
  // uint2 3 = 0b11 is int2 -1, uint2 2 = 0b10 is int2 -2; int2 -2 is uint2 2.
  OpTester("BitCast", 26)
      .input(tensor<UInt2>({3}, {UInt2{3}, UInt2{2}, UInt2{1}}))
      .attr("to", to(DType::kInt2))
      .expect<Int2>({3}, {Int2{-1}, Int2{-2}, Int2{1}})
      .check();
  OpTester("BitCast", 26)
      .input(tensor<Int2>({2}, {Int2{-2}, Int2{1}}))
      .attr("to", to(DType::kUInt2))
      .expect<UInt2>({2}, {UInt2{2}, UInt2{1}})
      .check();
  // float4e2m1 code 0b1001 (-0.5) is int4 -7 and uint4 9; e8m0 code 127 (1.0) is uint8 127.
  OpTester("BitCast", 26)
      .input(tensor<Float4E2M1>({2}, {Float4E2M1(-0.5f), Float4E2M1(6.0f)}))
      .attr("to", to(DType::kInt4))
      .expect<Int4>({2}, {Int4{-7}, Int4{7}})
      .check();
  OpTester("BitCast", 26)
      .input(tensor<uint8_t>({2}, {127, 255}))
      .attr("to", to(DType::kFloat8E8M0))
      .expect<Float8E8M0>({2}, {Float8E8M0::from_bits(127), Float8E8M0::from_bits(255)})
      .check();
}

TEST(BitCast, ShapeRuleGivesTargetDtype) {
  const Session s = OpTester("BitCast", 26)
                        .input(tensor<float>({2, 1}, {1, 2}))
                        .attr("to", to(DType::kUInt32))
                        .session();
  EXPECT_EQ(s.outputs()[0].dtype, DType::kUInt32);
  EXPECT_EQ(s.outputs()[0].shape_string(), "[2,1]");
}

TEST(BitCast, Errors) {
  expect_error(OpTester("BitCast", 26).input(tensor<float>({1}, {1})).attr("to", to(DType::kInt64)),
               ErrorCode::kInvalidArgument,
               "cannot bitcast float32 (32 bits) to int64 (64 bits): the widths differ");
  expect_error(
      OpTester("BitCast", 26).input(tensor<uint8_t>({1}, {1})).attr("to", to(DType::kUInt4)),
      ErrorCode::kInvalidArgument, "the widths differ");
  expect_error(
      OpTester("BitCast", 26).input(tensor<float>({1}, {1})).attr("to", to(DType::kString)),
      ErrorCode::kNotImplemented, "cannot bitcast to type code 8 (string)");
  expect_error(OpTester("BitCast", 26).input(tensor<float>({1}, {1})).attr("to", int64_t{99}),
               ErrorCode::kNotImplemented, "cannot bitcast to type code 99");
  // Strings never reach the kernel: the provider refuses them for the operator.
  expect_error(
      OpTester("BitCast", 26).input(tensor<std::string>({1}, {"a"})).attr("to", to(DType::kInt8)),
      ErrorCode::kNotImplemented, "input 0 is a string tensor, which this operator does not take");
}

}  // namespace
}  // namespace recur::test
