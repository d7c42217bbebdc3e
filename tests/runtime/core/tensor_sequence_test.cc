// Tensor::sequence_insert and sequence_erase: a sequence nothing else holds changes in place;
// a shared one is copied, so that whoever else holds it never sees it change.
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

TEST(TensorSequence, EraseShrinksAnUnsharedSequenceInPlace) {
  Tensor seq = Tensor::sequence({scalar(1), scalar(2), scalar(3), scalar(4)});
  const void* holder = seq.raw_data();
  seq = Tensor::sequence_erase(std::move(seq), 0);
  seq = Tensor::sequence_erase(std::move(seq), 2);
  EXPECT_EQ(seq.raw_data(), holder);
  EXPECT_EQ(seq.shape(), Shape({2}));
  EXPECT_EQ(firsts(seq), (std::vector<float>{2, 3}));
  seq = Tensor::sequence_erase(std::move(seq), 1);
  seq = Tensor::sequence_erase(std::move(seq), 0);
  EXPECT_EQ(seq.shape(), Shape({0}));
  EXPECT_EQ(seq.element_dtype(), DType::kFloat32);  // an empty sequence keeps its type
}

TEST(TensorSequence, EraseCopiesASharedSequenceAndChecksThePosition) {
  const Tensor kept = Tensor::sequence({scalar(1), scalar(2), scalar(3)});
  const Tensor shrunk = Tensor::sequence_erase(kept, 1);
  EXPECT_NE(shrunk.raw_data(), kept.raw_data());
  EXPECT_EQ(firsts(kept), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(firsts(shrunk), (std::vector<float>{1, 3}));
  testing::expect_error([&] { Tensor::sequence_erase(Tensor::sequence({scalar(1)}), 1); },
                        ErrorCode::kOutOfRange, {"position 1 of a sequence of 1"});
  testing::expect_error([&] { Tensor::sequence_erase(scalar(1), 0); }, ErrorCode::kInvalidArgument,
                        {"not a sequence"});
}

}  // namespace
}  // namespace recur::test
