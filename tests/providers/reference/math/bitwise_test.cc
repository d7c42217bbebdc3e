// BitwiseAnd/Or/Xor/Not (opset 18): two's complement results on each integer width, with
// broadcasting; floats are refused. Expected values are numpy's (expressions in comments).
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Bitwise, AndBroadcastsUint8) {
  // np.bitwise_and(np.uint8([0xF0, 0x3C]), np.uint8([0x0F])) -> [0x00, 0x0C]
  OpTester("BitwiseAnd", 18)
      .input(tensor<uint8_t>({2}, {0xF0, 0x3C}))
      .input(tensor<uint8_t>({1}, {0x0F}))
      .expect<uint8_t>({2}, {0x00, 0x0C})
      .check();
}

TEST(Bitwise, OrAndXorOnNegativeInts) {
  // np.bitwise_or(np.int32(-8), 3) -> -5; np.bitwise_xor(np.int16([5, -1]), 3) -> [6, -4]
  OpTester("BitwiseOr", 18)
      .input(tensor<int32_t>({1}, {-8}))
      .input(tensor<int32_t>({1}, {3}))
      .expect<int32_t>({1}, {-5})
      .check();
  OpTester("BitwiseXor", 18)
      .input(tensor<int16_t>({2}, {5, -1}))
      .input(tensor<int16_t>({1}, {3}))
      .expect<int16_t>({2}, {6, -4})
      .check();
}

TEST(Bitwise, NotKeepsTheWidth) {
  // np.invert(np.int8([0, -1, 5])) -> [-1, 0, -6]; np.invert(np.uint16(0)) -> 65535
  OpTester("BitwiseNot", 18)
      .input(tensor<int8_t>({3}, {0, -1, 5}))
      .expect<int8_t>({3}, {-1, 0, -6})
      .check();
  OpTester("BitwiseNot", 18)
      .input(tensor<uint16_t>({1}, {0}))
      .expect<uint16_t>({1}, {65535})
      .check();
}

TEST(Bitwise, FloatsAreRefused) {
  OpTester("BitwiseAnd", 18)
      .input(tensor<float>({1}, {1}))
      .input(tensor<float>({1}, {1}))
      .expect_error(ErrorCode::kNotImplemented, "float32")
      .check();
}

}  // namespace
}  // namespace recur::test
