// Trilu and EyeLike with diagonals far outside the matrix.
#include <limits>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Trilu, ExtremeK) {
  std::vector<int64_t> v(12);
  for (int i = 0; i < 12; ++i) v[static_cast<size_t>(i)] = i + 1;
  const Tensor x = Tensor::from_vector<int64_t>({3, 4}, v);
  OpTester m = OpTester("Trilu", 14)
                   .input("x", x)
                   .input("k", DType::kInt64, {})
                   .attr("upper", int64_t{0})
                   .output("y");
  const Session s = m.session();
  // numpy: np.tril(x, k=-2**62) is all zeros; np.tril(x, k=2**62) is x.
  EXPECT_EQ(
      values<int64_t>(s.run({{"x", x}, {"k", Tensor::scalar<int64_t>(-(int64_t{1} << 62))}})[0]),
      std::vector<int64_t>(12, 0));
  EXPECT_EQ(
      values<int64_t>(s.run(
          {{"x", x}, {"k", Tensor::scalar<int64_t>(std::numeric_limits<int64_t>::max())}})[0]),
      v);
}

TEST(Trilu, UpperOnBool) {
  const Tensor x = Tensor::from_vector<bool>({2, 3}, std::vector<bool>(6, true));
  // numpy: np.triu(np.ones((2, 3), bool), 1)
  Outputs o = OpTester("Trilu", 14)
                  .input("x", x)
                  .constant("k", Tensor::scalar<int64_t>(1))
                  .output("y")
                  .run({{"x", x}});
  EXPECT_EQ(values<bool>(o[0]), (std::vector<bool>{false, true, true, false, false, true}));
}

TEST(EyeLike, OffsetDiagonals) {
  const Tensor x = Tensor::zeros(DType::kInt32, {3, 4});
  // numpy: np.eye(3, 4, k=2)
  Outputs o = OpTester("EyeLike", 9)
                  .input("x", x)
                  .attr("k", int64_t{2})
                  .attr("dtype", static_cast<int64_t>(DType::kFloat64))
                  .output("y")
                  .run({{"x", x}});
  EXPECT_EQ(values<double>(o[0]), (std::vector<double>{0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0}));
  // numpy: np.eye(3, 4, k=-2**63) is all zeros.
  Outputs z = OpTester("EyeLike", 9)
                  .input("x", x)
                  .attr("k", std::numeric_limits<int64_t>::min())
                  .output("y")
                  .run({{"x", x}});
  EXPECT_EQ(values<int32_t>(z[0]), std::vector<int32_t>(12, 0));
}

}  // namespace
}  // namespace recur::test
