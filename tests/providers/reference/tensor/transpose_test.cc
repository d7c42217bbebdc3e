// Transpose of bool and float16 data, permutations that move only dimensions of size 1 (a
// view of the input), and permutations that are not.
#include <tuple>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Transpose, BoolAndFloat16) {
  const Tensor b = Tensor::from_vector<bool>({2, 3}, {true, false, false, true, true, false});
  // numpy: x.T
  Outputs o = OpTester("Transpose", 13).input("x", b).output("y").run({{"x", b}});
  EXPECT_EQ(values<bool>(o[0]), (std::vector<bool>{true, true, false, true, false, false}));
  std::vector<Float16> v;
  for (int i = 0; i < 24; ++i) v.push_back(Float16(static_cast<float>(i)));
  const Tensor h = Tensor::from_vector<Float16>({2, 3, 4}, v);
  // numpy: np.arange(24).reshape(2, 3, 4).transpose(1, 2, 0)[1, 2] == [6, 18]
  Outputs t = OpTester("Transpose", 13)
                  .input("x", h)
                  .attr("perm", std::vector<int64_t>{1, 2, 0})
                  .output("y")
                  .run({{"x", h}});
  ASSERT_EQ(t[0].shape(), (Shape{3, 4, 2}));
  const Float16* p = t[0].data<Float16>();
  EXPECT_EQ(static_cast<float>(p[(1 * 4 + 2) * 2 + 0]), 6.0f);
  EXPECT_EQ(static_cast<float>(p[(1 * 4 + 2) * 2 + 1]), 18.0f);
}

// [1, 2, 3] to [2, 1, 3] and [2, 3, 1]: the bytes stay in order, and so must the values;
// [2, 1, 3] to [3, 1, 2] moves them.
TEST(Transpose, MovingOnlyDimensionsOfOneKeepsTheOrder) {
  std::vector<float> v(6);
  for (int i = 0; i < 6; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  for (const auto& [in, perm, want_shape, want] :
       std::vector<std::tuple<Shape, std::vector<int64_t>, Shape, std::vector<float>>>{
           {{1, 2, 3}, {1, 0, 2}, {2, 1, 3}, v},
           {{1, 2, 3}, {1, 2, 0}, {2, 3, 1}, v},
           {{2, 1, 3}, {2, 1, 0}, {3, 1, 2}, {0, 3, 1, 4, 2, 5}}}) {
    const Tensor x = Tensor::from_vector<float>(in, v);
    Outputs o =
        OpTester("Transpose", 13).input("x", x).attr("perm", perm).output("y").run({{"x", x}});
    ASSERT_EQ(o[0].shape(), want_shape);
    EXPECT_EQ(values<float>(o[0]), want);
  }
}

TEST(Transpose, BadPermIsAnErrorAtLoad) {
  for (const std::vector<int64_t>& perm :
       {std::vector<int64_t>{0, 0}, std::vector<int64_t>{0, 2}, std::vector<int64_t>{1, 0, 2}}) {
    const std::string msg = error_of([&] {
      OpTester("Transpose", 13)
          .input("x", DType::kFloat32, {2, 3})
          .attr("perm", perm)
          .output("y")
          .session();
    });
    EXPECT_NE(msg.find("node 'node' (Transpose)"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace recur::test
