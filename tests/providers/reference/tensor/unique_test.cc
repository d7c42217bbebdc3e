// Unique: every output, along an inner axis, without sorting, and on float16. Expected values
// from np.unique(..., return_index=True, return_inverse=True, return_counts=True); the
// unsorted case reorders numpy's groups by first occurrence.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Outputs unique(const Tensor& x, std::optional<int64_t> axis, int64_t sorted) {
  OpTester m("Unique", 11);
  m.input("x", x).attr("sorted", sorted).output("y").output("i").output("inv").output("c");
  if (axis) m.attr("axis", *axis);
  return m.run({{"x", x}});
}

TEST(Unique, RowsAlongAxis0) {
  const Tensor x = Tensor::from_vector<int32_t>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  Outputs o = unique(x, 0, 1);
  EXPECT_EQ(o[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(values<int64_t>(o[2]), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(values<int64_t>(o[3]), (std::vector<int64_t>{2, 1}));
}

TEST(Unique, ColumnsAlongAxis1) {
  const Tensor x = Tensor::from_vector<int32_t>({2, 3}, {1, 1, 0, 2, 2, 5});
  Outputs o = unique(x, -1, 1);
  EXPECT_EQ(o[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{0, 1, 5, 2}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(values<int64_t>(o[2]), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(values<int64_t>(o[3]), (std::vector<int64_t>{1, 2}));
}

TEST(Unique, Float16FlattenedSortedAndUnsorted) {
  std::vector<Float16> v;
  for (float f : {2.f, 1.f, 1.f, 3.f, 4.f, 3.f}) v.push_back(Float16(f));
  const Tensor x = Tensor::from_vector<Float16>({2, 3}, v);
  Outputs o = unique(x, std::nullopt, 1);
  std::vector<float> y;
  for (Float16 h : values<Float16>(o[0])) y.push_back(static_cast<float>(h));
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>(o[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(o[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  // By first occurrence: 2 (index 0), 1 (1), 3 (3), 4 (4).
  Outputs u = unique(x, std::nullopt, 0);
  y.clear();
  for (Float16 h : values<Float16>(u[0])) y.push_back(static_cast<float>(h));
  EXPECT_EQ(y, (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(u[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(u[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(u[3]), (std::vector<int64_t>{1, 2, 2, 1}));
}

}  // namespace
}  // namespace recur::test
