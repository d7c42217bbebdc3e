// TensorScatter (opset 24): linear and circular writes along the sequence axis, per-batch write
// indices, other axes, strings, and errors. Expected values worked out by hand from the
// operator's pseudocode.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

TEST(TensorScatter, PrefillWritesAtZero) {
  // past [2, 3, 1] zeros, update [2, 2, 1]: rows 0 and 1 of each batch entry.
  OpTester("TensorScatter", 24)
      .input(tensor<float>({2, 3, 1}, {0, 0, 0, 0, 0, 0}))
      .input(tensor<float>({2, 2, 1}, {1, 2, 3, 4}))
      .expect<float>({2, 3, 1}, {1, 2, 0, 3, 4, 0})
      .check();
}

TEST(TensorScatter, LinearWriteIndicesPerBatch) {
  // past [2, 1, 4, 2] (axis -2 is the length-4 axis); batch 0 writes at 1, batch 1 at 3.
  OpTester("TensorScatter", 24)
      .input(tensor<int32_t>({2, 1, 4, 2}, std::vector<int32_t>(16, 0)))
      .input(tensor<int32_t>({2, 1, 1, 2}, {1, 2, 3, 4}))
      .input(tensor<int64_t>({2}, {1, 3}))
      .expect<int32_t>({2, 1, 4, 2}, {0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 4})
      .check();
}

TEST(TensorScatter, CircularWraps) {
  // Length 3, two updates written from 2: positions 2 and 0. Batch 1 starts at -1 = 2 too.
  // The second axis (length 4) exceeds the cache length, so only the sequence index wraps.
  std::vector<float> past(2 * 4 * 3, 9);
  std::vector<float> want = past;
  // Batch b, row r: update (b * 4 + r) * 2 + j goes to sequence (2 + j) % 3.
  std::vector<float> upd(2 * 4 * 2);
  for (size_t i = 0; i < upd.size(); ++i) upd[i] = static_cast<float>(i);
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 2; ++j)
        want[static_cast<size_t>((b * 4 + r) * 3 + (2 + j) % 3)] =
            static_cast<float>((b * 4 + r) * 2 + j);
  OpTester("TensorScatter", 24)
      .input(tensor<float>({2, 4, 3}, past))
      .input(tensor<float>({2, 4, 2}, upd))
      .input(tensor<int64_t>({2}, {2, -1}))
      .attr("axis", int64_t{2})
      .attr("mode", std::string("circular"))
      .expect<float>({2, 4, 3}, want)
      .check();
}

TEST(TensorScatter, AxisOneWithTrailingDims) {
  // past [1, 3, 2], axis 1, update [1, 1, 2] written at row 2.
  OpTester("TensorScatter", 24)
      .input(tensor<int64_t>({1, 3, 2}, {1, 2, 3, 4, 5, 6}))
      .input(tensor<int64_t>({1, 1, 2}, {7, 8}))
      .input(tensor<int64_t>({1}, {2}))
      .attr("axis", int64_t{1})
      .expect<int64_t>({1, 3, 2}, {1, 2, 3, 4, 7, 8})
      .check();
}

TEST(TensorScatter, Strings) {
  OpTester("TensorScatter", 24)
      .input(tensor<std::string>({1, 2}, {"a", "b"}))
      .input(tensor<std::string>({1, 1}, {"c"}))
      .input(tensor<int64_t>({1}, {1}))
      .attr("axis", int64_t{1})
      .expect<std::string>({1, 2}, {"a", "c"})
      .check();
}

TEST(TensorScatter, Errors) {
  expect_error(OpTester("TensorScatter", 24)
                   .input(tensor<float>({1, 2, 1}, {0, 0}))
                   .input(tensor<float>({1, 2, 1}, {1, 2}))
                   .input(tensor<int64_t>({1}, {1})),
               ErrorCode::kOutOfRange,
               "write index 1 of batch entry 0 with 2 updates does not fit the cache length 2 "
               "(mode linear)");
  expect_error(OpTester("TensorScatter", 24)
                   .input(tensor<float>({1, 2, 1}, {0, 0}))
                   .input(tensor<float>({1, 1, 1}, {1}))
                   .input(tensor<int64_t>({1}, {-1})),
               ErrorCode::kOutOfRange, "write index -1 of batch entry 0");
  expect_error(OpTester("TensorScatter", 24)
                   .input(tensor<float>({1, 2, 1}, {0, 0}))
                   .input(tensor<float>({1, 3, 1}, {1, 2, 3}))
                   .dynamic_shapes(),
               ErrorCode::kInvalidArgument,
               "update [1,3,1] must match past_cache [1,2,1] except along axis 1, where it may "
               "be shorter");
  expect_error(OpTester("TensorScatter", 24)
                   .input(tensor<float>({2, 2}, {0, 0, 0, 0}))
                   .input(tensor<float>({1, 2}, {1, 2}))
                   .attr("axis", int64_t{0}),
               ErrorCode::kInvalidArgument, "axis must not be 0, the batch axis");
  expect_error(OpTester("TensorScatter", 24)
                   .input(tensor<float>({2, 2, 1}, {0, 0, 0, 0}))
                   .input(tensor<float>({2, 1, 1}, {1, 2}))
                   .input(tensor<int32_t>({2}, {0, 0})),
               ErrorCode::kInvalidArgument, "write_indices must be int64 [2], not int32 [2]");
  expect_error(OpTester("TensorScatter", 24)
                   .input(tensor<float>({2, 2}, {0, 0, 0, 0}))
                   .input(tensor<double>({2, 1}, {1, 2})),
               ErrorCode::kInvalidArgument,
               "update (float64) must have past_cache's dtype float32");
  expect_error(OpTester("TensorScatter", 24)
                   .input(tensor<float>({2, 2}, {0, 0, 0, 0}))
                   .input(tensor<float>({2, 1}, {1, 2}))
                   .attr("mode", std::string("ring")),
               ErrorCode::kInvalidModel, "mode must be \"linear\" or \"circular\", not \"ring\"");
}

}  // namespace
}  // namespace recur::test
