// TensorProto <-> Tensor for the 4-bit and 8-bit float types: int4/uint4 are packed two per byte
// in raw_data (low nibble first) and in int32_data, and held one per byte in memory.
#include "runtime/engine/onnx/tensor_proto.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

namespace recur {
namespace {

TEST(TensorProto, Int4RawDataIsPackedLowNibbleFirst) {
  onnx::TensorProto p;
  p.set_data_type(22);  // INT4
  p.add_dims(3);
  // [-1, -7, 7]: nibbles 0xF, 0x9, 0x7 -> bytes 0x9F, 0x07.
  p.set_raw_data(std::string("\x9F\x07", 2));
  auto t = tensor_from_proto(p, nullptr, "t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->dtype(), DType::kInt4);
  const auto* v = t->data<Int4>();
  EXPECT_EQ(v[0].value, -1);
  EXPECT_EQ(v[1].value, -7);
  EXPECT_EQ(v[2].value, 7);

  onnx::TensorProto back;
  ASSERT_TRUE(tensor_to_proto(*t, "t", &back).ok());
  EXPECT_EQ(back.raw_data(), std::string("\x9F\x07", 2));
}

TEST(TensorProto, UInt4Int32DataPackedAndFloat8Bits) {
  onnx::TensorProto p;
  p.set_data_type(21);  // UINT4
  p.add_dims(3);
  p.add_int32_data(0x9F);
  p.add_int32_data(0x07);
  auto t = tensor_from_proto(p, nullptr, "t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  const auto* v = t->data<UInt4>();
  EXPECT_EQ(v[0].value, 15);
  EXPECT_EQ(v[1].value, 9);
  EXPECT_EQ(v[2].value, 7);

  onnx::TensorProto f;
  f.set_data_type(17);  // FLOAT8E4M3FN, its bit patterns in int32_data
  f.add_dims(1);
  f.add_int32_data(0x38);
  auto g = tensor_from_proto(f, nullptr, "f");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(static_cast<float>(g->data<Float8E4M3FN>()[0]), 1.0f);
}

TEST(TensorProto, Int4RawDataOfWrongSizeIsRefused) {
  onnx::TensorProto p;
  p.set_data_type(22);
  p.add_dims(3);
  p.set_raw_data(std::string("\x01\x02\x03", 3));  // 3 elements need 2 packed bytes
  EXPECT_FALSE(tensor_from_proto(p, nullptr, "t").ok());
}

// Found by fuzz_tensor_proto (tests/fuzz_regressions/tensor_proto/string_count_narrowed_to_int.pb):
// the count was narrowed to int before it was compared with the number of strings, so 2^32
// elements matched an empty string_data and 2^32 strings were allocated.
TEST(TensorProto, StringCountIsComparedWithoutNarrowing) {
  onnx::TensorProto p;
  p.set_data_type(8);  // STRING
  p.add_dims(int64_t{1} << 32);
  auto t = tensor_from_proto(p, nullptr, "t");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("string_data holds 0 values"), std::string::npos)
      << t.status().message();
}

}  // namespace
}  // namespace recur
