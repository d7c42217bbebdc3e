// Det: batches, a singular matrix, row swaps, and the shape error.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(Det, BatchWithPivotingAndASingularMatrix) {
  // np.linalg.det([[[2, 0, 1], [1, 3, 2], [1, 1, 2]], [[0, 1, 0], [1, 0, 0], [0, 0, 1]],
  //                [[1, 2, 3], [2, 4, 6], [0, 0, 1]]]) == [6, -1, 0]
  auto y = OpTester("Det", 11)
               .input(tensor<double>({3, 3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2, 0, 1, 0, 1, 0,
                                                 0, 0, 0, 1, 1, 2, 3, 2, 4, 6, 0, 0, 1}))
               .run();
  expect_tensor<double>(y[0], {3}, {6, -1, 0}, 1e-12);
}

TEST(Det, NonSquareIsAnError) {
  expect_error(OpTester("Det", 11).input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})),
               ErrorCode::kInvalidArgument, "[*, M, M]");
}

}  // namespace
}  // namespace recur::test
