// MatMul, Gemm and Einsum: shape errors and edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/graph/einsum_plan.h"
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor zeros(const Shape& s) { return Tensor::zeros(DType::kFloat32, s); }

TEST(ReferenceMatMul, InnerDimensionsMismatch) {
  expect_error(
      [] {
        run_op("MatMul", 13, {{"a", zeros({2, 3})}, {"b", zeros({4, 5})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MatMul)", "inner dimensions"});
}

TEST(ReferenceMatMul, BatchDimensionsMismatch) {
  expect_error(
      [] {
        run_op("MatMul", 13, {{"a", zeros({2, 1, 3})}, {"b", zeros({3, 3, 1})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MatMul)"});
}

TEST(ReferenceMatMul, EmptyInnerDimensionGivesZeros) {
  // numpy: np.ones((2, 0)) @ np.ones((0, 3)) == np.zeros((2, 3)).
  Outputs y = run_op("MatMul", 13, {{"a", zeros({2, 0})}, {"b", zeros({0, 3})}});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(y[0]), std::vector<float>(6, 0.0f));
}

TEST(ReferenceMatMul, ConstantWeightsOnEveryProvider) {
  // A constant B (oneDNN reorders it once per shape into its own layout): every provider that
  // claims the node matches the expected values, for a batch of A, a 1-D A and a 2-D A.
  // numpy: np.arange(6, dtype=np.float32).reshape(2, 3) @ B with B = [[1, 0], [0, 1], [2, -1]].
  const Tensor b = floats({3, 2}, {1, 0, 0, 1, 2, -1});
  OpTester("MatMul", 13)
      .input(floats({2, 3}, {0, 1, 2, 3, 4, 5}))
      .constant(b)
      .expect<float>({2, 2}, {4, -1, 13, -1})
      .check();
  // np.array([1, 2, 3], np.float32) @ B
  OpTester("MatMul", 13)
      .input(floats({3}, {1, 2, 3}))
      .constant(b)
      .expect<float>({2}, {7, -1})
      .check();
  // np.arange(12, dtype=np.float32).reshape(2, 2, 3) @ B
  OpTester("MatMul", 13)
      .input(floats({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}))
      .constant(b)
      .expect<float>({2, 2, 2}, {4, -1, 13, -1, 22, -1, 31, -1})
      .check();
}

TEST(ReferenceMatMul, ScalarsAreRejected) {
  expect_error(
      [] {
        run_op("MatMul", 13, {{"a", floats({}, {1})}, {"b", floats({1}, {1})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (MatMul)", "rank >= 1"});
}

TEST(ReferenceMatMul, IntegerOverflowWraps) {
  // numpy int32: 65536 * 65536 wraps to 0, + 3 * 1 = 3.
  Outputs y = run_op("MatMul", 13,
                     {{"a", Tensor::from_vector<int32_t>({1, 2}, {65536, 3})},
                      {"b", Tensor::from_vector<int32_t>({2, 1}, {65536, 1})}});
  EXPECT_EQ(values<int32_t>(y[0]), (std::vector<int32_t>{3}));
}

TEST(ReferenceGemm, CThatDoesNotBroadcast) {
  expect_error(
      [] {
        run_op("Gemm", 13, {{"a", zeros({2, 3})}, {"b", zeros({3, 4})}, {"c", zeros({3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Gemm)", "does not broadcast to [2,4]"});
}

TEST(ReferenceGemm, NonMatrixAndInnerMismatch) {
  expect_error(
      [] {
        run_op("Gemm", 13, {{"a", zeros({2, 3, 1})}, {"b", zeros({3, 4})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Gemm)", "2-D"});
  expect_error(
      [] {
        run_op("Gemm", 13, {{"a", zeros({2, 3})}, {"b", zeros({4, 3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Gemm)", "inner dimensions"});
}

TEST(ReferenceGemm, LegacyNoBroadcastNeedsFullC) {
  expect_error(
      [] {
        run_op("Gemm", 6, {{"a", zeros({2, 3})}, {"b", zeros({3, 4})}, {"c", zeros({4})}});
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Gemm)", "does not broadcast"});
}

TEST(ReferenceGemm, BetaZeroIgnoresC) {
  // alpha * A * B with beta = 0: C's NaN does not leak into the result.
  Outputs y = run_op(
      "Gemm", 13,
      {{"a", floats({1, 2}, {1, 2})}, {"b", floats({2, 1}, {3, 4})}, {"c", floats({1}, {NAN})}},
      [](onnx::NodeProto& n) { set_attr(n, "beta", 0.0f); });
  EXPECT_EQ(values<float>(y[0]), (std::vector<float>{11}));
}

TEST(ReferenceEinsum, BadEquations) {
  expect_error(
      [] {
        run_op("Einsum", 12, {{"a", zeros({2, 2})}},
               [](onnx::NodeProto& n) { set_attr(n, "equation", std::string("i$->i")); });
      },
      ErrorCode::kInvalidModel, {"node 'node' (Einsum)", "invalid character"});
  expect_error(
      [] {
        run_op("Einsum", 12, {{"a", zeros({2, 3})}},
               [](onnx::NodeProto& n) { set_attr(n, "equation", std::string("ijk->i")); });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Einsum)", "rank 2"});
  expect_error(
      [] {
        run_op("Einsum", 12, {{"a", zeros({2, 3})}, {"b", zeros({4, 3})}},
               [](onnx::NodeProto& n) { set_attr(n, "equation", std::string("ij,jk->ik")); });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Einsum)", "do not match"});
  expect_error(
      [] {
        run_op("Einsum", 12, {{"a", zeros({2, 3})}},
               [](onnx::NodeProto& n) { set_attr(n, "equation", std::string("ij->ik")); });
      },
      ErrorCode::kInvalidArgument, {"node 'node' (Einsum)", "output subscript"});
}

// einsum::walk_rows's runs, expanded, are the offsets of every index of the axes in order (the
// last fastest), counted here digit by digit: random groups of axes with extents 0 to 3 (an
// axis of 1 is skipped, of 0 ends the walk) and strides of either sign.
TEST(EinsumWalk, RowsExpandToEveryIndexInOrder) {
  using Axis = einsum::GemmAxes::Axis;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<Axis> groups[3];
    for (auto& g : groups) {
      for (int i = static_cast<int>(rng() % 3); i > 0; --i) {
        const int64_t extent = trial % 50 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3);
        const int64_t stride = static_cast<int64_t>(rng() % 40) - 8;
        g.push_back(Axis{extent, stride, stride + 1, 2 * stride});
      }
    }
    std::vector<Axis> all;
    for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
    int64_t count = 1;
    for (const Axis& a : all) count *= a.extent;
    for (int64_t Axis::*stride : {&Axis::sa, &Axis::sy}) {
      std::vector<int64_t> want, got;
      for (int64_t flat = 0; flat < count; ++flat) {
        int64_t off = 0, rest = flat;
        for (size_t d = all.size(); d-- > 0;) {
          off += (rest % all[d].extent) * (all[d].*stride);
          rest /= all[d].extent;
        }
        want.push_back(off);
      }
      einsum::walk_rows({&groups[0], &groups[1], &groups[2]}, stride,
                        [&](int64_t off, int64_t n, int64_t step) {
                          for (int64_t i = 0; i < n; ++i) got.push_back(off + i * step);
                        });
      EXPECT_EQ(got, want) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace recur::test
