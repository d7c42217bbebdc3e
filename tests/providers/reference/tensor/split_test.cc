// Split and Concat: each opset's way of giving the sizes, empty parts, and the errors for
// sizes that do not add up.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor i64(const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

const Tensor kX = Tensor::from_vector<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});

TEST(Split, SizesFromEachOpsetsSource) {
  // numpy: np.split(x, [1], axis=1) -> [[0],[3]] and [[1,2],[4,5]]
  const std::vector<int32_t> a = {0, 3}, b = {1, 2, 4, 5};
  Outputs o13 = OpTester("Split", 13)
                    .input("x", kX)
                    .input("s", DType::kInt64, {2})
                    .attr("axis", int64_t{-1})
                    .output("a")
                    .output("b")
                    .run({{"x", kX}, {"s", i64({1, 2})}});
  Outputs o2 = OpTester("Split", 2)
                   .input("x", kX)
                   .attr("axis", int64_t{1})
                   .attr("split", std::vector<int64_t>{1, 2})
                   .output("a")
                   .output("b")
                   .run({{"x", kX}});
  Outputs o1 = OpTester("Split", 1)
                   .input("x", kX)
                   .constant("s", i64({1, 2}))
                   .attr("axis", int64_t{1})
                   .output("a")
                   .output("b")
                   .run({{"x", kX}});
  for (const Outputs* o : {&o13, &o2, &o1}) {
    EXPECT_EQ(values<int32_t>((*o)[0]), a);
    EXPECT_EQ(values<int32_t>((*o)[1]), b);
  }
}

TEST(Split, EmptyPartAndEqualSplit) {
  Outputs o = OpTester("Split", 13)
                  .input("x", kX)
                  .constant("s", i64({0, 2}))
                  .output("a")
                  .output("b")
                  .run({{"x", kX}});
  EXPECT_EQ(o[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(o[1].shape(), (Shape{2, 3}));
  Outputs e = OpTester("Split", 13)
                  .input("x", kX)
                  .attr("axis", int64_t{1})
                  .output("a")
                  .output("b")
                  .output("c")
                  .run({{"x", kX}});
  EXPECT_EQ(values<int32_t>(e[2]), (std::vector<int32_t>{2, 5}));
}

TEST(Split, SizesThatDoNotAddUpAreErrors) {
  struct Case {
    std::vector<int64_t> split;
    std::string why;
  };
  for (const Case& c : std::vector<Case>{{{1, 1}, "sums to 2"},
                                         {{4, -1}, "negative size"},
                                         {{1, 1, 1}, "3 entries for 2 outputs"}}) {
    const std::string msg = error_of([&] {
      OpTester("Split", 13)
          .input("x", kX)
          .input("s", DType::kInt64, {-1})
          .attr("axis", int64_t{1})
          .output("a")
          .output("b")
          .run({{"x", kX}, {"s", i64(c.split)}});
    });
    EXPECT_NE(msg.find("node 'node' (Split)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.why), std::string::npos) << msg;
  }
  const std::string msg = error_of([&] {
    OpTester("Split", 13)
        .input("x", kX)
        .attr("axis", int64_t{1})
        .output("a")
        .output("b")
        .run({{"x", kX}});
  });
  EXPECT_NE(msg.find("equal parts"), std::string::npos) << msg;
  // With a constant split the error comes at load.
  const std::string at_load = error_of([&] {
    OpTester("Split", 13)
        .input("x", kX)
        .constant("s", i64({2, 2}))
        .attr("axis", int64_t{1})
        .output("a")
        .output("b")
        .session();
  });
  EXPECT_NE(at_load.find("node 'node' (Split)"), std::string::npos) << at_load;
}

TEST(Concat, Opset1DefaultsToAxis1AndEmptyInputsJoin) {
  const Tensor e = Tensor::empty(DType::kInt32, {2, 0});
  Outputs o = OpTester("Concat", 1)
                  .input("x", kX)
                  .input("e", e)
                  .input("z", kX)
                  .output("y")
                  .run({{"x", kX}, {"e", e}, {"z", kX}});
  // numpy: np.concatenate([x, e, x], axis=1)
  EXPECT_EQ(values<int32_t>(o[0]), (std::vector<int32_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
}

TEST(Concat, MismatchedShapesAreErrors) {
  const Tensor y = Tensor::from_vector<int32_t>({3, 3}, std::vector<int32_t>(9, 0));
  const std::string msg = error_of([&] {
    OpTester("Concat", 13)
        .input("x", DType::kInt32, {-1, -1})
        .input("y", DType::kInt32, {-1, -1})
        .attr("axis", int64_t{1})
        .output("o")
        .run({{"x", kX}, {"y", y}});
  });
  EXPECT_NE(msg.find("node 'node' (Concat)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not match"), std::string::npos) << msg;
}

TEST(Split, Opset18NumOutputsLastPartSmaller) {
  // Split-18: 7 into 4 parts of ceil(7 / 4) = 2, the last taking the remaining 1.
  Outputs o = OpTester("Split", 18)
                  .input("x", Tensor::from_vector<int32_t>({7}, {0, 1, 2, 3, 4, 5, 6}))
                  .attr("num_outputs", int64_t{4})
                  .outputs(4)
                  .run();
  EXPECT_EQ(values<int32_t>(o[2]), (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(values<int32_t>(o[3]), (std::vector<int32_t>{6}));
}

TEST(Split, Opset18MorePartsThanCeilingCovers) {
  // 5 into 4 parts of ceil(5 / 4) = 2: the ONNX reference's slices are 2, 2, 1 and 0 long.
  Outputs o = OpTester("Split", 18)
                  .input("x", Tensor::from_vector<int32_t>({5}, {0, 1, 2, 3, 4}))
                  .attr("num_outputs", int64_t{4})
                  .outputs(4)
                  .run();
  EXPECT_EQ(values<int32_t>(o[2]), (std::vector<int32_t>{4}));
  EXPECT_EQ(o[3].shape(), (Shape{0}));
}

TEST(Split, Opset13StillNeedsEqualParts) {
  // The shape is known at load, so the shape rule refuses it there.
  OpTester("Split", 13)
      .input(Tensor::from_vector<int32_t>({7}, {0, 1, 2, 3, 4, 5, 6}))
      .outputs(4)
      .expect_error(ErrorCode::kInvalidModel, "equal parts")
      .check();
}

}  // namespace
}  // namespace recur::test
