// Tensor::sequence_insert: a sequence nothing else holds grows in place; a shared one is
// copied, so that whoever else holds it never sees it change.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "recur/error.h"
#include "recur/tensor.h"
#include "tests/support/expect_error.h"

namespace recur::test {
namespace {

Tensor scalar(float v) { return Tensor::scalar<float>(v); }

std::vector<float> firsts(const Tensor& seq) {
  std::vector<float> out;
  for (const Tensor& e : seq.elements()) out.push_back(e.data<float>()[0]);
  return out;
}

TEST(TensorSequence, InsertGrowsAnUnsharedSequenceInPlace) {
  Tensor seq = Tensor::sequence({}, DType::kFloat32);
  const void* holder = seq.raw_data();
  seq = Tensor::sequence_insert(std::move(seq), 0, scalar(2));
  seq = Tensor::sequence_insert(std::move(seq), 0, scalar(1));
  seq = Tensor::sequence_insert(std::move(seq), 2, scalar(3));
  EXPECT_EQ(seq.raw_data(), holder);  // the same vector, grown
  EXPECT_EQ(seq.shape(), Shape({3}));
  EXPECT_EQ(firsts(seq), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(seq.element_dtype(), DType::kFloat32);
}

TEST(TensorSequence, InsertCopiesASharedSequence) {
  const Tensor kept = Tensor::sequence({scalar(1)});
  Tensor grown = Tensor::sequence_insert(kept, 1, scalar(2));  // `kept` still holds it
  EXPECT_NE(grown.raw_data(), kept.raw_data());
  EXPECT_EQ(firsts(kept), (std::vector<float>{1}));
  EXPECT_EQ(kept.shape(), Shape({1}));
  EXPECT_EQ(firsts(grown), (std::vector<float>{1, 2}));
}

TEST(TensorSequence, InsertChecksTypeAndPosition) {
  // An empty sequence of unknown type takes its first element's.
  Tensor seq = Tensor::sequence({});
  seq = Tensor::sequence_insert(std::move(seq), 0, Tensor::scalar<int64_t>(4));
  EXPECT_EQ(seq.element_dtype(), DType::kInt64);
  testing::expect_error(
      [&] {
        Tensor::sequence_insert(Tensor::sequence({scalar(1)}), 0, Tensor::scalar<int64_t>(4));
      },
      ErrorCode::kInvalidArgument, {"one dtype (float32), not int64"});
  testing::expect_error(
      [&] { Tensor::sequence_insert(Tensor::sequence({scalar(1)}), 2, scalar(2)); },
      ErrorCode::kOutOfRange, {"position 2 of a sequence of 1"});
  testing::expect_error([&] { Tensor::sequence_insert(scalar(1), 0, scalar(2)); },
                        ErrorCode::kInvalidArgument, {"not a sequence"});
}

}  // namespace
}  // namespace recur::test
