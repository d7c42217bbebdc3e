// CumProd (opset 26): axis, exclusive and reverse, integer wrapping, types. Expected values are
// numpy's (expressions in the comments).
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(CumProd, SpecExamples) {
  // The operator's documented example: x = [1, 2, 3] under the four attribute settings.
  const std::vector<std::pair<std::pair<int64_t, int64_t>, std::vector<float>>> cases = {
      {{0, 0}, {1, 2, 6}}, {{1, 0}, {1, 1, 2}}, {{0, 1}, {6, 6, 3}}, {{1, 1}, {6, 3, 1}}};
  for (const auto& [attrs, want] : cases) {
    OpTester("CumProd", 26)
        .input(tensor<float>({3}, {1, 2, 3}))
        .input(tensor<int64_t>({}, {0}))
        .attr("exclusive", attrs.first)
        .attr("reverse", attrs.second)
        .expect<float>({3}, want)
        .check();
  }
}

TEST(CumProd, AlongAxisOne) {
  // np.cumprod([[1, 2, 3], [4, 5, 6]], axis=1)
  OpTester("CumProd", 26)
      .input(tensor<double>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .input(tensor<int32_t>({}, {1}))
      .expect<double>({2, 3}, {1, 2, 6, 4, 20, 120})
      .check();
}

TEST(CumProd, ReverseExclusiveAlongAxisZero) {
  // Rows of [[1, 2, 3], [4, 5, 6]]: row 0 gets row 1, row 1 gets the empty product 1.
  OpTester("CumProd", 26)
      .input(tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .input(tensor<int64_t>({}, {-2}))
      .attr("exclusive", int64_t{1})
      .attr("reverse", int64_t{1})
      .expect<float>({2, 3}, {4, 5, 6, 1, 1, 1})
      .check();
}

TEST(CumProd, IntegersWrap) {
  // np.cumprod(np.array([65536, 65536, 3], np.int32), dtype=np.int32): 2^32 wraps to 0.
  OpTester("CumProd", 26)
      .input(tensor<int32_t>({3}, {65536, 65536, 3}))
      .input(tensor<int64_t>({}, {0}))
      .expect<int32_t>({3}, {65536, 0, 0})
      .check();
  // Exclusive uint64 [2^40, 2^30, 5]: [1, 2^40, 2^70 mod 2^64 = 0].
  OpTester("CumProd", 26)
      .input(tensor<uint64_t>({3}, {uint64_t{1} << 40, uint64_t{1} << 30, 5}))
      .input(tensor<int64_t>({}, {0}))
      .attr("exclusive", int64_t{1})
      .expect<uint64_t>({3}, {1, uint64_t{1} << 40, 0})
      .check();
  // int64 negatives: [-2, 3, -4] -> [-2, -6, 24].
  OpTester("CumProd", 26)
      .input(tensor<int64_t>({3}, {-2, 3, -4}))
      .input(tensor<int64_t>({}, {0}))
      .expect<int64_t>({3}, {-2, -6, 24})
      .check();
}

TEST(CumProd, Errors) {
  expect_error(
      OpTester("CumProd", 26).input(tensor<float>({2}, {1, 2})).input(tensor<int64_t>({}, {1})),
      ErrorCode::kOutOfRange, "axis 1 is out of range for rank 1");
  expect_error(
      OpTester("CumProd", 26).input(tensor<float>({2}, {1, 2})).input(tensor<int64_t>({2}, {0, 0})),
      ErrorCode::kInvalidArgument, "axis must be a scalar, not [2]");
  // int8 is a CumSum type but not one of CumProd's.
  expect_error(
      OpTester("CumProd", 26).input(tensor<int8_t>({2}, {1, 2})).input(tensor<int64_t>({}, {0})),
      ErrorCode::kNotImplemented, "dtype int8 is not supported");
}

}  // namespace
}  // namespace recur::test
