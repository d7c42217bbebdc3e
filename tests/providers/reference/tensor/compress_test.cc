// Compress: a short condition, and a condition that selects past the axis.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

const Tensor kX = Tensor::from_vector<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});

Outputs compress(const std::vector<bool>& cond, std::optional<int64_t> axis) {
  OpTester m("Compress", 11);
  m.input("x", kX).input("c", DType::kBool, {static_cast<int64_t>(cond.size())}).output("y");
  if (axis) m.attr("axis", *axis);
  return m.run(
      {{"x", kX}, {"c", Tensor::from_vector<bool>({static_cast<int64_t>(cond.size())}, cond)}});
}

TEST(Compress, ShortConditionLeavesTheRestOut) {
  // numpy: np.compress([False, True], x, axis=-1) and np.compress([1, 0, 0, 1], x)
  EXPECT_EQ(values<int32_t>(compress({false, true}, -1)[0]), (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(values<int32_t>(compress({true, false, false, true}, std::nullopt)[0]),
            (std::vector<int32_t>{0, 3}));
}

TEST(Compress, SelectingPastTheAxisIsAnError) {
  const std::string msg = error_of([] { compress({false, false, true}, 0); });
  EXPECT_NE(msg.find("node 'node' (Compress)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("beyond"), std::string::npos) << msg;
  // False entries past the end are harmless, as in numpy.
  EXPECT_EQ(compress({true, false, false}, 0)[0].shape(), (Shape{1, 3}));
}

}  // namespace
}  // namespace recur::test
