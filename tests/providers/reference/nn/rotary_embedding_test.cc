// RotaryEmbedding (opset 23): 4D and 3D X, halves and interleaved pairs, partial rotation,
// caches indexed by position_ids or by token, and errors. Expected values are numpy float64
// on the float32 caches: for each pair (x1, x2): (cos * x1 - sin * x2, sin * x1 + cos * x2).
#include <gtest/gtest.h>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

// X [1, 2, 2, 4] (batch, heads, seq, head) = 1 .. 16; angles [[0.5, 1], [0.25, 2]] per token.
Tensor x4d() {
  return tensor<float>({1, 2, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
}
Tensor cos_tokens() {
  return tensor<float>({1, 2, 2}, {0.8775825500488281f, 0.5403022766113281f, 0.9689124226570129f,
                                   -0.416146844625473f});
}
Tensor sin_tokens() {
  return tensor<float>({1, 2, 2}, {0.4794255495071411f, 0.8414709568023682f, 0.24740396440029144f,
                                   0.9092974066734314f});
}

TEST(RotaryEmbedding, FourDHalvesWithoutPositionIds) {
  OpTester("RotaryEmbedding", 23)
      .input(x4d())
      .input(cos_tokens())
      .input(sin_tokens())
      .expect<float>(
          {1, 2, 2, 4},
          {-0.5606940984725952f, -2.2852792739868164f, 3.1121731996536255f, 3.844151020050049f,
           3.1127343624830246f, -9.77126032114029f, 8.019406780600548f, 2.126609683036804f,
           2.624561905860901f, -4.694628715515137f, 13.96823799610138f, 14.89833688735962f,
           8.884802028536797f, -20.374814331531525f, 17.749937877058983f, 6.071814179420471f},
          1e-5)
      .check();
}

TEST(RotaryEmbedding, FourDInterleaved) {
  OpTester("RotaryEmbedding", 23)
      .input(x4d())
      .input(cos_tokens())
      .input(sin_tokens())
      .attr("interleaved", int64_t{1})
      .expect<float>(
          {1, 2, 2, 4},
          {-0.0812685489654541f, 2.2345906496047974f, -1.7449769973754883f, 4.685621976852417f,
           3.360138326883316f, 7.050494357943535f, -10.187407165765762f, 3.0359070897102356f,
           3.103987455368042f, 13.090655446052551f, -4.154326438903809f, 15.739807844161987f,
           9.132205992937088f, 16.78102545440197f, -20.790961176156998f, 6.981111586093903f},
          1e-5)
      .check();
}

TEST(RotaryEmbedding, ThreeDPartialRotationWithPositionIds) {
  // X [1, 2, 8]: two heads of 4; rotary_embedding_dim 2 rotates channel pair (0, 1) of each
  // head. Table rows: angle 0 and angle 1; token 0 at position 1, token 1 at position 0.
  OpTester("RotaryEmbedding", 23)
      .input(tensor<float>({1, 2, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}))
      .input(tensor<float>({2, 1}, {1.0f, 0.5403022766113281f}))
      .input(tensor<float>({2, 1}, {0.0f, 0.8414709568023682f}))
      .input(tensor<int64_t>({1, 2}, {1, 0}))
      .attr("num_heads", int64_t{2})
      .attr("rotary_embedding_dim", int64_t{2})
      .expect<float>({1, 2, 8},
                     {-1.1426396369934082f, 1.9220755100250244f, 3, 4, -2.3473143577575684f,
                      7.44916844367981f, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
                     1e-5)
      .check();
}

TEST(RotaryEmbedding, Errors) {
  // 3D X without num_heads.
  expect_error(OpTester("RotaryEmbedding", 23)
                   .input(tensor<float>({1, 2, 4}, std::vector<float>(8, 1)))
                   .input(cos_tokens())
                   .input(sin_tokens()),
               ErrorCode::kInvalidArgument,
               "num_heads must be given (positive) for a 3D X [1,2,4]");
  // Hidden size not a multiple of num_heads.
  expect_error(OpTester("RotaryEmbedding", 23)
                   .input(tensor<float>({1, 2, 6}, std::vector<float>(12, 1)))
                   .input(cos_tokens())
                   .input(sin_tokens())
                   .attr("num_heads", int64_t{4}),
               ErrorCode::kInvalidArgument,
               "the hidden size of X [1,2,6] is not a multiple of num_heads 4");
  // Odd rotary_embedding_dim.
  expect_error(OpTester("RotaryEmbedding", 23)
                   .input(x4d())
                   .input(cos_tokens())
                   .input(sin_tokens())
                   .attr("rotary_embedding_dim", int64_t{3}),
               ErrorCode::kInvalidArgument,
               "rotary_embedding_dim 3 must be even and at most the head size 4");
  // Caches of the wrong last dimension.
  expect_error(OpTester("RotaryEmbedding", 23)
                   .input(x4d())
                   .input(tensor<float>({1, 2, 1}, {1, 1}))
                   .input(tensor<float>({1, 2, 1}, {0, 0})),
               ErrorCode::kInvalidArgument,
               "without position_ids, cos_cache and sin_cache must be [1,2,2], not [1,2,1]");
  // A position beyond the table.
  expect_error(OpTester("RotaryEmbedding", 23)
                   .input(x4d())
                   .input(tensor<float>({2, 2}, {1, 1, 1, 1}))
                   .input(tensor<float>({2, 2}, {0, 0, 0, 0}))
                   .input(tensor<int64_t>({1, 2}, {0, 2})),
               ErrorCode::kOutOfRange, "position id 2 is outside the 2 rows of cos_cache");
  // float64 is outside the operator's types.
  expect_error(OpTester("RotaryEmbedding", 23)
                   .input(tensor<double>({1, 1, 1, 2}, {1, 2}))
                   .input(tensor<double>({1, 1, 1}, {1}))
                   .input(tensor<double>({1, 1, 1}, {0})),
               ErrorCode::kInvalidArgument, "X must be float32, float16 or bfloat16, not float64");
}

}  // namespace
}  // namespace recur::test
