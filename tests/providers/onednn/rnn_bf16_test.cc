// The f32 <-> bf16 conversions around the oneDNN RNN primitive in bf16: round to nearest even,
// NaN kept a NaN, infinities kept, over lengths that exercise both the 16-wide vector loop and
// its scalar tail. Expected bit patterns are worked out by hand from the IEEE layouts.
#include <gtest/gtest.h>

#if RECUR_HAVE_ONEDNN

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "providers/onednn/rnn/rnn_bf16.h"

namespace recur::onednn::rnn {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

struct Case {
  uint32_t f32;
  uint16_t bf16;
};

// 1.0 = 0x3f800000. A tie (low half 0x8000) goes to the even upper half; above it rounds up.
const Case kCases[] = {
    {0x3f800000u, 0x3f80},  // 1.0
    {0x3f808000u, 0x3f80},  // tie, 0x3f80 even: down
    {0x3f818000u, 0x3f82},  // tie, 0x3f81 odd: up
    {0x3f80c000u, 0x3f81},  // above the tie: up
    {0x3f807fffu, 0x3f80},  // below the tie: down
    {0xbf80c000u, 0xbf81},  // negative, by magnitude
    {0x7f800000u, 0x7f80},  // +inf
    {0xff800000u, 0xff80},  // -inf
    {0x7f7fffffu, 0x7f80},  // the largest float rounds to +inf
    {0x00000000u, 0x0000},  // +0
    {0x80000000u, 0x8000},  // -0
};

TEST(RnnBf16Conversion, RoundsToNearestEvenInTheVectorLoopAndTheTail) {
  // 37 = two 16-wide blocks and a tail of 5; every case lands in each part.
  for (size_t shift = 0; shift < 37; shift += 3) {
    std::vector<float> src(37);
    std::vector<uint16_t> want(37);
    for (size_t i = 0; i < src.size(); ++i) {
      const Case& c = kCases[(i + shift) % std::size(kCases)];
      src[i] = from_bits(c.f32);
      want[i] = c.bf16;
    }
    std::vector<uint16_t> got(src.size());
    f32_to_bf16(src.data(), got.data(), src.size());
    for (size_t i = 0; i < src.size(); ++i)
      EXPECT_EQ(got[i], want[i]) << "element " << i << " (shift " << shift << ")";
  }
}

TEST(RnnBf16Conversion, NanStaysNan) {
  std::vector<float> src(20, std::numeric_limits<float>::quiet_NaN());
  src[3] = from_bits(0x7f800001u);  // a signalling NaN whose payload sits in the low half
  std::vector<uint16_t> b(src.size());
  f32_to_bf16(src.data(), b.data(), src.size());
  std::vector<float> back(src.size());
  bf16_to_f32(b.data(), back.data(), b.size());
  for (size_t i = 0; i < src.size(); ++i) EXPECT_TRUE(std::isnan(back[i])) << "element " << i;
}

TEST(RnnBf16Conversion, WideningIsExact) {
  std::vector<uint16_t> src(35);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(0x3f80 + 7 * i);
  std::vector<float> got(src.size());
  bf16_to_f32(src.data(), got.data(), src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &got[i], sizeof(u));
    EXPECT_EQ(u, static_cast<uint32_t>(src[i]) << 16) << "element " << i;
  }
}

}  // namespace
}  // namespace recur::onednn::rnn

#endif
