// TensorProto <-> Tensor for the 4-bit and 8-bit float types: int4/uint4 are packed two per byte
// in raw_data (low nibble first) and in int32_data, and held one per byte in memory.
#include "runtime/engine/onnx/tensor_proto.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
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

TEST(TensorProto, Float4E2M1IsPackedLikeInt4AndNotSignExtended) {
  onnx::TensorProto p;
  p.set_data_type(23);  // FLOAT4E2M1
  p.add_dims(3);
  // [0.5, -6, 3]: codes 0x1, 0xF, 0x5 -> bytes 0xF1, 0x05 (odd count: a padding nibble).
  p.set_raw_data(std::string("\xF1\x05", 2));
  auto t = tensor_from_proto(p, nullptr, "t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->dtype(), DType::kFloat4E2M1);
  const auto* v = t->data<Float4E2M1>();
  EXPECT_EQ(v[0].bits, 0x1);
  EXPECT_EQ(v[1].bits, 0xF);
  EXPECT_EQ(v[2].bits, 0x5);
  EXPECT_EQ(static_cast<float>(v[1]), -6.0f);
  onnx::TensorProto back;
  ASSERT_TRUE(tensor_to_proto(*t, "t", &back).ok());
  EXPECT_EQ(back.data_type(), 23);
  EXPECT_EQ(back.raw_data(), std::string("\xF1\x05", 2));
}

TEST(TensorProto, Int2IsPackedFourPerByteLowestBitsFirst) {
  onnx::TensorProto p;
  p.set_data_type(26);  // INT2
  p.add_dims(5);
  // [1, -2, -1, 0, -2]: fields 01, 10, 11, 00 | 10 -> bytes 0b00111001 = 0x39, 0x02.
  p.set_raw_data(std::string("\x39\x02", 2));
  auto t = tensor_from_proto(p, nullptr, "t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->dtype(), DType::kInt2);
  const auto* v = t->data<Int2>();
  const int8_t want[5] = {1, -2, -1, 0, -2};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(v[i].value, want[i]) << i;
  onnx::TensorProto back;
  ASSERT_TRUE(tensor_to_proto(*t, "t", &back).ok());
  EXPECT_EQ(back.raw_data(), std::string("\x39\x02", 2));

  p.set_data_type(25);  // the same bytes as UINT2: [1, 2, 3, 0, 2]
  auto u = tensor_from_proto(p, nullptr, "u");
  ASSERT_TRUE(u.ok()) << u.status().message();
  const uint8_t uwant[5] = {1, 2, 3, 0, 2};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(u->data<UInt2>()[i].value, uwant[i]) << i;
}

TEST(TensorProto, UInt2Int32DataPackedOrOnePerEntry) {
  onnx::TensorProto p;
  p.set_data_type(25);  // UINT2
  p.add_dims(6);
  p.add_int32_data(0x39);  // [1, 2, 3, 0]
  p.add_int32_data(0x0E);  // [2, 3]
  auto t = tensor_from_proto(p, nullptr, "t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  const uint8_t want[6] = {1, 2, 3, 0, 2, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->data<UInt2>()[i].value, want[i]) << i;

  onnx::TensorProto q;
  q.set_data_type(26);  // INT2, one value per entry
  q.add_dims(2);
  q.add_int32_data(3);
  q.add_int32_data(1);
  auto r = tensor_from_proto(q, nullptr, "q");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->data<Int2>()[0].value, -1);
  EXPECT_EQ(r->data<Int2>()[1].value, 1);
}

TEST(TensorProto, Float8E8M0IsOneBytePerElement) {
  onnx::TensorProto p;
  p.set_data_type(24);  // FLOAT8E8M0
  p.add_dims(3);
  p.set_raw_data(std::string("\x7F\x81\xFF", 3));
  auto t = tensor_from_proto(p, nullptr, "t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->dtype(), DType::kFloat8E8M0);
  EXPECT_EQ(static_cast<float>(t->data<Float8E8M0>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(t->data<Float8E8M0>()[1]), 4.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(t->data<Float8E8M0>()[2])));

  onnx::TensorProto f;
  f.set_data_type(24);
  f.add_dims(1);
  f.add_int32_data(0x80);
  auto g = tensor_from_proto(f, nullptr, "f");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(static_cast<float>(g->data<Float8E8M0>()[0]), 2.0f);
}

TEST(TensorProto, PackedSizesThatDoNotMatchAreRefusedNamingTheTensor) {
  for (int32_t code : {23, 25, 26}) {
    for (const std::string& raw : {std::string("\x01", 1), std::string("\x01\x02\x03", 3)}) {
      onnx::TensorProto p;
      p.set_data_type(code);
      p.add_dims(5);  // 3 bytes packed 2 per byte, 2 bytes packed 4 per byte
      if (code == 23 && raw.size() == 3) continue;  // the right size for float4e2m1
      p.set_raw_data(raw);
      auto t = tensor_from_proto(p, nullptr, "weights 'w'");
      ASSERT_FALSE(t.ok()) << code << " " << raw.size();
      EXPECT_NE(t.status().message().find("weights 'w'"), std::string::npos)
          << t.status().message();
    }
  }
  onnx::TensorProto q;
  q.set_data_type(26);
  q.add_dims(5);
  for (int i = 0; i < 3; ++i) q.add_int32_data(0);  // neither 5 values nor 2 packed bytes
  EXPECT_FALSE(tensor_from_proto(q, nullptr, "q").ok());
}

TEST(TensorProto, UnknownTypeCodesAreRefused) {
  EXPECT_TRUE(known_tensor_dtype(23));
  EXPECT_TRUE(known_tensor_dtype(24));
  EXPECT_TRUE(known_tensor_dtype(25));
  EXPECT_TRUE(known_tensor_dtype(26));
  EXPECT_FALSE(known_tensor_dtype(27));
  EXPECT_FALSE(known_tensor_dtype(15));  // COMPLEX128
  onnx::TensorProto p;
  p.set_data_type(27);
  p.add_dims(1);
  p.set_raw_data(std::string("\x00", 1));
  auto t = tensor_from_proto(p, nullptr, "initializer 'x'");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("initializer 'x'"), std::string::npos);
  EXPECT_NE(t.status().message().find("27"), std::string::npos);
}

}  // namespace
}  // namespace recur
