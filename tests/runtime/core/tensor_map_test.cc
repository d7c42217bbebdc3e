// Tensor::map: what a map value holds, and the maps it refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "recur/error.h"
#include "recur/tensor.h"
#include "tests/support/expect_error.h"

namespace recur::test {
namespace {

Tensor keys(const std::vector<int64_t>& k) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(k.size())}, k);
}

TEST(TensorMap, HoldsKeysAndValuesInOrder) {
  Tensor m = Tensor::map(Tensor::from_vector<std::string>({2}, {"b", "a"}),
                         Tensor::from_vector<double>({2}, {1.5, -2}));
  EXPECT_TRUE(m.is_map());
  EXPECT_FALSE(m.is_tensor());
  EXPECT_EQ(m.dtype(), DType::kMap);
  EXPECT_EQ(m.element_dtype(), DType::kFloat64);
  EXPECT_EQ(m.map_keys().data<std::string>()[0], "b");
  EXPECT_EQ(m.map_values().data<double>()[1], -2);
  EXPECT_EQ(m.shape(), Shape({2}));
}

TEST(TensorMap, CloneIsDeep) {
  Tensor m = Tensor::map(keys({1}), Tensor::from_vector<float>({1}, {3}));
  Tensor c = m.clone();
  const_cast<float*>(m.map_values().data<float>())[0] = 4;
  EXPECT_EQ(c.map_values().data<float>()[0], 3);
  EXPECT_EQ(c.map_keys().data<int64_t>()[0], 1);
}

TEST(TensorMap, RefusesWhatIsNotAMap) {
  const Tensor f = Tensor::from_vector<float>({2}, {1, 2});
  recur::testing::expect_error(
      [&] {
        (void)Tensor::map(Tensor::from_vector<float>({2}, {1, 2}), f);
      },
      ErrorCode::kInvalidArgument, {"keys are an int64 or string tensor"});
  recur::testing::expect_error(
      [&] {
        (void)Tensor::map(keys({1, 2}), Tensor::from_vector<float>({3}, {1, 2, 3}));
      },
      ErrorCode::kInvalidArgument, {"1-D keys and values of one length"});
  recur::testing::expect_error(
      [&] {
        (void)Tensor::map(keys({1, 2}), Tensor::from_vector<float>({1, 2}, {1, 2}));
      },
      ErrorCode::kInvalidArgument, {"1-D keys and values"});
  recur::testing::expect_error(
      [&] {
        (void)Tensor::map(keys({4, 1, 4}), Tensor::from_vector<float>({3}, {1, 2, 3}));
      },
      ErrorCode::kInvalidArgument, {"the key 4 twice"});
  recur::testing::expect_error(
      [&] {
        (void)Tensor::map(Tensor::from_vector<std::string>({2}, {"x", "x"}), f);
      },
      ErrorCode::kInvalidArgument, {"the key 'x' twice"});
  recur::testing::expect_error([&] { (void)Tensor::map(keys({1}), Tensor::sequence({f})); },
                               ErrorCode::kInvalidArgument,
                               {"values are a numeric or string tensor"});
}

TEST(TensorMap, ARepeatedKeyAmongManyIsFound) {
  // Beyond 16 keys the check sorts a copy rather than comparing pairs.
  std::vector<int64_t> k(40);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<int64_t>(i) * 3;
  Tensor values = Tensor::zeros(DType::kFloat32, {40});
  EXPECT_TRUE(Tensor::map(keys(k), values).is_map());
  k[31] = k[7];
  recur::testing::expect_error([&] { (void)Tensor::map(keys(k), values); },
                               ErrorCode::kInvalidArgument, {"the key 21 twice"});
}

TEST(TensorMap, ASequenceOfMapsAgreesOnTypes) {
  Tensor a = Tensor::map(keys({1}), Tensor::from_vector<float>({1}, {1}));
  Tensor b = Tensor::map(keys({2}), Tensor::from_vector<double>({1}, {1}));
  Tensor s = Tensor::sequence({a, a});
  EXPECT_EQ(s.element_dtype(), DType::kMap);
  recur::testing::expect_error(
      [&] {
        (void)Tensor::sequence({a, b});
      },
      ErrorCode::kInvalidArgument, {"maps of one key and value type"});
}

TEST(TensorMap, IsNotReshapedNorMadeEmpty) {
  Tensor m = Tensor::map(keys({1}), Tensor::from_vector<float>({1}, {1}));
  recur::testing::expect_error(
      [&] {
        (void)m.reshaped({1, 1});
      },
      ErrorCode::kInvalidArgument, {"cannot be reshaped"});
  recur::testing::expect_error([&] { (void)Tensor::empty(DType::kMap, {1}); },
                               ErrorCode::kInvalidArgument, {"cannot make"});
  // A map stays on the host: asking for the host gives the same value.
  EXPECT_EQ(m.to(Device::cpu()).raw_data(), m.raw_data());
}

}  // namespace
}  // namespace recur::test
