// com.microsoft::Inverse: a batch needing row swaps, a singular matrix, and the shape error.
#include <cmath>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Inverse, BatchWithPivotingAndASingularMatrix) {
  // np.linalg.inv([[0, 2], [4, 0]]) == [[0, 0.25], [0.5, 0]] (its first pivot needs a row
  // swap); [[1, 2], [2, 4]] is singular.
  auto y = OpTester("Inverse", 1, "com.microsoft")
               .input(tensor<double>({2, 2, 2}, {0, 2, 4, 0, 1, 2, 2, 4}))
               .run();
  ASSERT_EQ(y[0].shape(), (Shape{2, 2, 2}));
  const double want[] = {0, 0.25, 0.5, 0};
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(y[0].data<double>()[i], want[i]) << i;
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(y[0].data<double>()[i])) << i;
}

TEST(Inverse, NonSquareIsAnError) {
  expect_error(
      OpTester("Inverse", 1, "com.microsoft").input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})),
      ErrorCode::kInvalidArgument, "[*, M, M]");
}

}  // namespace
}  // namespace recur::test
