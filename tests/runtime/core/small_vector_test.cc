// recur::SmallVector and recur::Shape: elements inline up to the capacity, on the heap past
// it, and the std::vector behaviour the code base relies on (issue 13).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "recur/small_vector.h"
#include "recur/tensor.h"

namespace recur {
namespace {

using V4 = SmallVector<int64_t, 4>;

TEST(SmallVector, KeepsUpToItsCapacityInline) {
  V4 v;
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.is_inline());
  for (int64_t i = 0; i < 4; ++i) v.push_back(i * 10);
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(v.size(), 4u);
  EXPECT_EQ(v.capacity(), 4u);
  EXPECT_EQ(v[3], 30);
  EXPECT_EQ(v.front(), 0);
  EXPECT_EQ(v.back(), 30);
}

TEST(SmallVector, GrowsOntoTheHeapPastItsCapacity) {
  V4 v;
  for (int64_t i = 0; i < 9; ++i) v.push_back(i);
  EXPECT_FALSE(v.is_inline());
  EXPECT_GE(v.capacity(), 9u);
  ASSERT_EQ(v.size(), 9u);
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], i);
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_GE(v.capacity(), 9u);  // clear keeps the block, as std::vector does
}

TEST(SmallVector, ShapeHoldsEightDimensionsInline) {
  Shape s{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_TRUE(s.is_inline());
  s.push_back(9);
  EXPECT_FALSE(s.is_inline());
  EXPECT_EQ(s, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(SmallVector, CopiesAndMovesInlineAndHeapElements) {
  for (size_t n : {size_t{3}, size_t{7}}) {
    V4 a;
    for (size_t i = 0; i < n; ++i) a.push_back(static_cast<int64_t>(i + 1));
    V4 b = a;
    EXPECT_EQ(a, b);
    b[0] = 100;
    EXPECT_EQ(a[0], 1);  // a deep copy
    V4 c = std::move(b);
    EXPECT_EQ(c[0], 100);
    EXPECT_EQ(c.size(), n);
    EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    V4 d{9};
    d = c;
    EXPECT_EQ(d, c);
    V4 e{5, 5};
    e = std::move(d);
    EXPECT_EQ(e, c);
    e = e;  // self-assignment keeps the elements
    EXPECT_EQ(e, c);
  }
}

TEST(SmallVector, ComparesByElements) {
  EXPECT_EQ(V4({1, 2}), V4({1, 2}));
  EXPECT_NE(V4({1, 2}), V4({1, 2, 3}));
  EXPECT_NE(V4({1, 2}), V4({2, 1}));
  EXPECT_TRUE(V4({1, 2}) < V4({1, 3}));
  EXPECT_FALSE(V4({1, 3}) < V4({1, 2}));
  // With std::vector, either way round.
  EXPECT_TRUE(V4({1, 2}) == (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE((std::vector<int64_t>{1, 2}) != V4({1}));
}

TEST(SmallVector, InsertsAndErasesLikeStdVector) {
  V4 v{1, 4};
  v.insert(v.begin() + 1, {2, 3});
  EXPECT_EQ(v, V4({1, 2, 3, 4}));
  v.insert(v.begin(), 2, 0);  // past the inline capacity
  EXPECT_EQ(v, (std::vector<int64_t>{0, 0, 1, 2, 3, 4}));
  v.insert(v.end(), v.begin(), v.begin() + 2);  // a range of itself
  EXPECT_EQ(v, (std::vector<int64_t>{0, 0, 1, 2, 3, 4, 0, 0}));
  v.erase(v.begin(), v.begin() + 2);
  EXPECT_EQ(v, (std::vector<int64_t>{1, 2, 3, 4, 0, 0}));
  v.erase(v.end() - 1);
  v.pop_back();
  EXPECT_EQ(v, V4({1, 2, 3, 4}));
  v.resize(6, 7);
  EXPECT_EQ(v, (std::vector<int64_t>{1, 2, 3, 4, 7, 7}));
  v.resize(2);
  EXPECT_EQ(v, V4({1, 2}));
  v.assign(3, 5);
  EXPECT_EQ(v, V4({5, 5, 5}));
  v.push_back(v[0]);  // an element of itself
  EXPECT_EQ(v, V4({5, 5, 5, 5}));
  v.push_back(v[0]);  // an element of itself while growing
  EXPECT_EQ(v, V4({5, 5, 5, 5, 5}));
  EXPECT_THROW(v.at(5), std::out_of_range);
}

TEST(SmallVector, ConvertsToAndFromStdVector) {
  const std::vector<int64_t> in{3, 4, 5};
  Shape s = in;
  EXPECT_EQ(s.size(), 3u);
  const std::vector<int64_t> out = s;
  EXPECT_EQ(out, in);
  EXPECT_EQ(s.to_vector(), in);
  const Shape from_range(in.begin() + 1, in.end());
  EXPECT_EQ(from_range, Shape({4, 5}));
  const int32_t narrow[] = {6, 7};
  EXPECT_EQ(Shape(std::begin(narrow), std::end(narrow)), Shape({6, 7}));
  EXPECT_EQ(Shape(2, 1), Shape({1, 1}));  // count and value, as std::vector
}

TEST(SmallVector, TensorsKeepTheirShapeInline) {
  const Tensor t = Tensor::zeros(DType::kFloat32, {2, 3, 4});
  EXPECT_TRUE(t.shape().is_inline());
  EXPECT_EQ(t.shape(), Shape({2, 3, 4}));
  const Tensor v = t.reshaped({6, 4});
  EXPECT_EQ(v.shape(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(v.raw_data(), t.raw_data());
}

}  // namespace
}  // namespace recur
